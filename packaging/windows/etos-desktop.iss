; Inno Setup 6 script: the Windows installer of ETOS Desktop.
;
; UNTESTED: no Windows machine builds it here. It runs only on the windows runner of
; .github/workflows/installers.yml, through `python packaging/build.py`, which passes
;   /DAppVersion=<etos_desktop.__version__> /DBundleDir=<dist\etos-desktop> /DIconFile=<…\etos-desktop.ico>
; The version is never written here: it comes from etos_desktop/__init__.py.

#ifndef AppVersion
  #error AppVersion is not defined: build with python packaging/build.py
#endif
#ifndef BundleDir
  #error BundleDir is not defined: build with python packaging/build.py
#endif
#ifndef IconFile
  #error IconFile is not defined: build with python packaging/build.py
#endif

[Setup]
AppId={{4C1B6F2E-7A0D-4E8B-9B57-3E2D5C9A1F60}
AppName=ETOS Desktop
AppVersion={#AppVersion}
AppPublisher=ETOS Desktop developers
DefaultDirName={autopf}\ETOS Desktop
DefaultGroupName=ETOS Desktop
DisableProgramGroupPage=yes
; Per-user install by default (no admin prompt); the user may choose all users.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputBaseFilename=etos-desktop-{#AppVersion}-windows-x64-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\etos-desktop.exe
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
LicenseFile=..\..\LICENSE

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"
; Inno Setup 6 ships Chinese (Simplified) as an unofficial translation; add it when the build
; machine has it: Name: "chinesesimplified"; MessagesFile: "compiler:Languages\ChineseSimplified.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#BundleDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\ETOS Desktop"; Filename: "{app}\etos-desktop.exe"
Name: "{autodesktop}\ETOS Desktop"; Filename: "{app}\etos-desktop.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\etos-desktop.exe"; Description: "{cm:LaunchProgram,ETOS Desktop}"; Flags: nowait postinstall skipifsilent
