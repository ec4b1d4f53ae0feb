"""Sync across devices (DESIGN §11): CRDT documents, encrypted update files, folder/WebDAV transports; imports core only."""
