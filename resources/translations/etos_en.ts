<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en" sourcelanguage="en">
<context>
    <name>ApprovalDialog</name>
    <message numerus="yes">
        <source>⚠ This contains %n invisible or control character(s), shown as \u escapes. Delete an escape to leave that character out.</source>
        <translation>
            <numerusform>⚠ This contains %n invisible or control character, shown as a \u escape. Delete the escape to leave that character out.</numerusform>
            <numerusform>⚠ This contains %n invisible or control characters, shown as \u escapes. Delete an escape to leave that character out.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>CheckinsSection</name>
    <message numerus="yes">
        <source>{name} (its own persona in %n conversation(s))</source>
        <translation>
            <numerusform>{name} (its own persona in %n conversation)</numerusform>
            <numerusform>{name} (its own persona in %n conversations)</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ContextDialog</name>
    <message numerus="yes">
        <source>Conversation history: {kept} of %n message(s)</source>
        <translation>
            <numerusform>Conversation history: {kept} of %n message</numerusform>
            <numerusform>Conversation history: {kept} of %n messages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Left out to fit: %n older turn(s), {n} messages</source>
        <translation>
            <numerusform>Left out to fit: %n older turn, {n} messages</numerusform>
            <numerusform>Left out to fit: %n older turns, {n} messages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>All your memories: %n, all that fit</source>
        <translation>
            <numerusform>All your memories: %n, all that fit</numerusform>
            <numerusform>All your memories: %n, all that fit</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Chosen by: all that fit — all %n memories, about {tokens} of the {budget}-token budget, sent in the system message as standing background, in a stable order, so the message stays the same from turn to turn and servers can cache it.</source>
        <translation>
            <numerusform>Chosen by: all that fit — %n memory, about {tokens} of the {budget}-token budget, sent in the system message as standing background, so the message stays the same from turn to turn and servers can cache it.</numerusform>
            <numerusform>Chosen by: all that fit — all %n memories, about {tokens} of the {budget}-token budget, sent in the system message as standing background, in a stable order, so the message stays the same from turn to turn and servers can cache it.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Chosen by: retrieval — the store of %n memories is over the {budget}-token budget for sending them all, so the ones relevant to this message were chosen.</source>
        <translation>
            <numerusform>Chosen by: retrieval — the store of %n memory is over the {budget}-token budget for sending them all, so the ones relevant to this message were chosen.</numerusform>
            <numerusform>Chosen by: retrieval — the store of %n memories is over the {budget}-token budget for sending them all, so the ones relevant to this message were chosen.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Summaries of other conversations: %n, snapshot of {time}</source>
        <translation>
            <numerusform>Summaries of other conversations: %n, snapshot of {time}</numerusform>
            <numerusform>Summaries of other conversations: %n, snapshot of {time}</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>All %n saved memories were sent, fenced and labelled as standing background, in the system message after the summaries.</source>
        <translation>
            <numerusform>The %n saved memory was sent, fenced and labelled as standing background, in the system message after the summaries.</numerusform>
            <numerusform>All %n saved memories were sent, fenced and labelled as standing background, in the system message after the summaries.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n summaries of earlier conversations were added before your message, for a question about the past.</source>
        <translation>
            <numerusform>%n summary of an earlier conversation was added before your message, for a question about the past.</numerusform>
            <numerusform>%n summaries of earlier conversations were added before your message, for a question about the past.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>No saved memory was relevant, but %n summaries of earlier conversations were sent, fenced and labelled as reference data, for a question about the past.</source>
        <translation>
            <numerusform>No saved memory was relevant, but %n summary of an earlier conversation was sent, fenced and labelled as reference data, for a question about the past.</numerusform>
            <numerusform>No saved memory was relevant, but %n summaries of earlier conversations were sent, fenced and labelled as reference data, for a question about the past.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Memories sent: %n, fenced and labelled as reference data, at the top of your message (compatibility mode: the server takes one system message).</source>
        <translation>
            <numerusform>Memories sent: %n, fenced and labelled as reference data, at the top of your message (compatibility mode: the server takes one system message).</numerusform>
            <numerusform>Memories sent: %n, fenced and labelled as reference data, at the top of your message (compatibility mode: the server takes one system message).</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Memories sent: %n, fenced and labelled as reference data, as a system message right before your message.</source>
        <translation>
            <numerusform>Memories sent: %n, fenced and labelled as reference data, as a system message right before your message.</numerusform>
            <numerusform>Memories sent: %n, fenced and labelled as reference data, as a system message right before your message.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Sent: {kept} of %n message(s) before yours (messages {span}), about {tokens} tokens, exactly as stored.</source>
        <translation>
            <numerusform>Sent: {kept} of %n message before yours (messages {span}), about {tokens} tokens, exactly as stored.</numerusform>
            <numerusform>Sent: {kept} of %n messages before yours (messages {span}), about {tokens} tokens, exactly as stored.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Sent: the newest {kept} of %n message(s) before yours (messages {first}–{total}), about {tokens} tokens, exactly as stored.</source>
        <translation>
            <numerusform>Sent: the newest {kept} of %n message before yours (messages {first}–{total}), about {tokens} tokens, exactly as stored.</numerusform>
            <numerusform>Sent: the newest {kept} of %n messages before yours (messages {first}–{total}), about {tokens} tokens, exactly as stored.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Left out to fit the context window: %n older turn(s), messages {span}, about {tokens} tokens. Whole turns are left out, oldest first.</source>
        <translation>
            <numerusform>Left out to fit the context window: %n older turn, messages {span}, about {tokens} tokens. Whole turns are left out, oldest first.</numerusform>
            <numerusform>Left out to fit the context window: %n older turns, messages {span}, about {tokens} tokens. Whole turns are left out, oldest first.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>ImportPreviewDialog</name>
    <message numerus="yes">
        <source>%n facts</source>
        <translation>
            <numerusform>%n fact</numerusform>
            <numerusform>%n facts</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n more</source>
        <translation>
            <numerusform>%n more</numerusform>
            <numerusform>%n more</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n to add</source>
        <translation>
            <numerusform>%n to add</numerusform>
            <numerusform>%n to add</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n to update</source>
        <translation>
            <numerusform>%n to update</numerusform>
            <numerusform>%n to update</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n already here</source>
        <translation>
            <numerusform>%n already here</numerusform>
            <numerusform>%n already here</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n skipped</source>
        <translation>
            <numerusform>%n skipped</numerusform>
            <numerusform>%n skipped</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message numerus="yes">
        <source>%n reply(ies) cut off by the last exit were kept as interrupted</source>
        <translation>
            <numerusform>%n reply cut off by the last exit was kept as interrupted</numerusform>
            <numerusform>%n replies cut off by the last exit were kept as interrupted</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MemoryPage</name>
    <message numerus="yes">
        <source>Delete %n selected memories? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>Delete %n selected memory? It is removed from memory and from the records of what was sent. Conversations keep their messages; backups keep it until they rotate.

You can undo this only until you close Settings.</numerusform>
            <numerusform>Delete %n selected memories? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Delete all %n memories, active and archived? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>Delete the only memory? It is removed from memory and from the records of what was sent. Conversations keep their messages; backups keep it until they rotate.

You can undo this only until you close Settings.</numerusform>
            <numerusform>Delete all %n memories, active and archived? They are removed from memory and from the records of what was sent. Conversations keep their messages; backups keep them until they rotate.

You can undo this only until you close Settings.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Archived %n memories.</source>
        <translation>
            <numerusform>Archived %n memory.</numerusform>
            <numerusform>Archived %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Restored %n memories.</source>
        <translation>
            <numerusform>Restored %n memory.</numerusform>
            <numerusform>Restored %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleting %n memories…</source>
        <translation>
            <numerusform>Deleting %n memory…</numerusform>
            <numerusform>Deleting %n memories…</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Brought back %n memories.</source>
        <translation>
            <numerusform>Brought back %n memory.</numerusform>
            <numerusform>Brought back %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Exported %n memories to {path}.</source>
        <translation>
            <numerusform>Exported %n memory to {path}.</numerusform>
            <numerusform>Exported %n memories to {path}.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Nothing to import: all %n memories are here already.</source>
        <translation>
            <numerusform>Nothing to import: the memory is here already.</numerusform>
            <numerusform>Nothing to import: all %n memories are here already.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Re-embedding cancelled after %n memories.</source>
        <translation>
            <numerusform>Re-embedding cancelled after %n memory.</numerusform>
            <numerusform>Re-embedding cancelled after %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Embedded %n memories.</source>
        <translation>
            <numerusform>Embedded %n memory.</numerusform>
            <numerusform>Embedded %n memories.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories</source>
        <translation>
            <numerusform>%n memory</numerusform>
            <numerusform>%n memories</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n active</source>
        <translation>
            <numerusform>%n active</numerusform>
            <numerusform>%n active</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n memories. Undo is possible until you close Settings.</source>
        <translation>
            <numerusform>Deleted %n memory. Undo is possible until you close Settings.</numerusform>
            <numerusform>Deleted %n memories. Undo is possible until you close Settings.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MemoryTableModel</name>
    <message numerus="yes">
        <source>used %n time(s)</source>
        <translation>
            <numerusform>used %n time</numerusform>
            <numerusform>used %n times</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MessageSearchDialog</name>
    <message numerus="yes">
        <source>More than %n message(s) found; scroll for more.</source>
        <translation>
            <numerusform>More than %n message found; scroll for more.</numerusform>
            <numerusform>More than %n messages found; scroll for more.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n message(s) found.</source>
        <translation>
            <numerusform>%n message found.</numerusform>
            <numerusform>%n messages found.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>MessageWidget</name>
    <message numerus="yes">
        <source>Show the whole message (%n more characters)</source>
        <translation>
            <numerusform>Show the whole message (%n more character)</numerusform>
            <numerusform>Show the whole message (%n more characters)</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1 — retrying in %n s</source>
        <translation>
            <numerusform>%1 — retrying in %n s</numerusform>
            <numerusform>%1 — retrying in %n s</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Retrying in %n s</source>
        <translation>
            <numerusform>Retrying in %n s</numerusform>
            <numerusform>Retrying in %n s</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>PastedText</name>
    <message numerus="yes">
        <source>Pasted text: {chars} characters, %Ln line(s)</source>
        <translation>
            <numerusform>Pasted text: {chars} characters, %Ln line</numerusform>
            <numerusform>Pasted text: {chars} characters, %Ln lines</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SummariesPage</name>
    <message numerus="yes">
        <source>Delete %n selected summaries? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>Delete %n selected summary? It is removed for good and no longer sent to the model; the conversation keeps its messages.

You can undo this only until you close Settings.</numerusform>
            <numerusform>Delete %n selected summaries? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Delete all %n summaries, current, earlier and archived? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</source>
        <translation>
            <numerusform>Delete the only summary? It is removed for good and no longer sent to the model; the conversation keeps its messages.

You can undo this only until you close Settings.</numerusform>
            <numerusform>Delete all %n summaries, current, earlier and archived? They are removed for good, also from the records of what was sent, and no longer sent to the model; the conversations keep their messages.

You can undo this only until you close Settings.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Archived %n summaries.</source>
        <translation>
            <numerusform>Archived %n summary.</numerusform>
            <numerusform>Archived %n summaries.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Restored %n summaries.</source>
        <translation>
            <numerusform>Restored %n summary.</numerusform>
            <numerusform>Restored %n summaries.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Brought back %n summaries.</source>
        <translation>
            <numerusform>Brought back %n summary.</numerusform>
            <numerusform>Brought back %n summaries.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n user messages</source>
        <translation>
            <numerusform>%n user message</numerusform>
            <numerusform>%n user messages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n not yet summarised</source>
        <translation>
            <numerusform>%n not yet summarised</numerusform>
            <numerusform>%n not yet summarised</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>summarised after %n more user messages</source>
        <translation>
            <numerusform>summarised after %n more user message</numerusform>
            <numerusform>summarised after %n more user messages</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n summaries</source>
        <translation>
            <numerusform>%n summary</numerusform>
            <numerusform>%n summaries</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n current</source>
        <translation>
            <numerusform>%n current</numerusform>
            <numerusform>%n current</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Deleted %n summaries. Undo is possible until you close Settings.</source>
        <translation>
            <numerusform>Deleted %n summary. Undo is possible until you close Settings.</numerusform>
            <numerusform>Deleted %n summaries. Undo is possible until you close Settings.</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SummaryHistoryDialog</name>
    <message numerus="yes">
        <source>%n user turns</source>
        <translation>
            <numerusform>%n user turn</numerusform>
            <numerusform>%n user turns</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>SyncPage</name>
    <message numerus="yes">
        <source>%n local changes</source>
        <translation>
            <numerusform>%n local change</numerusform>
            <numerusform>%n local changes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n merged since the app started; the other versions are in those memories&apos; histories</source>
        <translation>
            <numerusform>%n merged since the app started; the other version is in that memory&apos;s history</numerusform>
            <numerusform>%n merged since the app started; the other versions are in those memories&apos; histories</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n new memories from other devices.</source>
        <translation>
            <numerusform>%n new memory from other devices.</numerusform>
            <numerusform>%n new memories from other devices.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories changed on other devices.</source>
        <translation>
            <numerusform>%n memory changed on other devices.</numerusform>
            <numerusform>%n memories changed on other devices.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories deleted on other devices.</source>
        <translation>
            <numerusform>%n memory deleted on other devices.</numerusform>
            <numerusform>%n memories deleted on other devices.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>Sent: %n changes of this device.</source>
        <translation>
            <numerusform>Sent: %n change of this device.</numerusform>
            <numerusform>Sent: %n changes of this device.</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n memories from other devices were not taken: they break this device&apos;s limits (the details are in the log).</source>
        <translation>
            <numerusform>%n memory from other devices was not taken: it breaks this device&apos;s limits (the details are in the log).</numerusform>
            <numerusform>%n memories from other devices were not taken: they break this device&apos;s limits (the details are in the log).</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%n files could not be used:</source>
        <translation>
            <numerusform>%n file could not be used:</numerusform>
            <numerusform>%n files could not be used:</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>WelcomePanel</name>
    <message numerus="yes">
        <source>I remember %n thing(s) about you.</source>
        <translation>
            <numerusform>I remember %n thing about you.</numerusform>
            <numerusform>I remember %n things about you.</numerusform>
        </translation>
    </message>
</context>
</TS>
