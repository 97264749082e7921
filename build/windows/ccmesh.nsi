; The per-user installer of ccmesh's Windows desktop build. `make
; package-windows` runs makensis on it with these defines:
;
;   VERSION       the text version (the .deb's and the release files' string)
;   VERSION_QUAD  the four numbers of the version resource (n.n.n.n)
;   EXE           the desktop build (bin/ccmesh-desktop.exe)
;   ICON          the app icon as an .ico (made from build/appicon.png)
;   OUTFILE       the installer to write
;
; It installs for the current user only (no administrator prompt): the exe
; to %LOCALAPPDATA%\Programs\ccmesh, a Start menu entry, an uninstaller
; registered under HKCU, and if asked the same Run key value the app's
; "Start at login" setting writes (app/platform/autostart_windows.go).

Unicode true
SetCompressor /SOLID lzma
RequestExecutionLevel user
ManifestDPIAware true

!ifndef VERSION | VERSION_QUAD | EXE | ICON | OUTFILE
  !error "run through make package-windows: VERSION, VERSION_QUAD, EXE, ICON and OUTFILE are needed"
!endif

!define APP "ccmesh"
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
; The key and value app/platform/autostart_windows.go reads and writes.
!define RUN_KEY "Software\Microsoft\Windows\CurrentVersion\Run"
!define RUN_VALUE "ccmesh"
; WebView2's runtime (the window is a WebView2), per machine or per user.
!define WEBVIEW2_GUID "{F3017226-FE2A-4295-8BDF-00C3A9A7E4C5}"

Name "${APP}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "Software\${APP}" "InstallDir"

VIProductVersion "${VERSION_QUAD}"
VIFileVersion "${VERSION_QUAD}"
VIAddVersionKey /LANG=1033 "ProductName" "${APP}"
VIAddVersionKey /LANG=1033 "ProductVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileVersion" "${VERSION}"
VIAddVersionKey /LANG=1033 "FileDescription" "${APP} ${VERSION} setup"
VIAddVersionKey /LANG=1033 "CompanyName" "${APP}"
VIAddVersionKey /LANG=1033 "LegalCopyright" "ccmesh contributors"

!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "Sections.nsh"
!include "WinVer.nsh"
!include "x64.nsh"

!define MUI_ICON "${ICON}"
!define MUI_UNICON "${ICON}"
!define MUI_ABORTWARNING
!define MUI_COMPONENTSPAGE_NODESC
!define MUI_FINISHPAGE_RUN "$INSTDIR\ccmesh.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start ccmesh now"
!define MUI_UNCONFIRMPAGE_TEXT_TOP "ccmesh will be removed. Its data (settings, endpoints, keys and the request log in $APPDATA\ccmesh) is kept; delete that folder yourself to remove it too."

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "ccmesh (required)" SecApp
  SectionIn RO
  SetShellVarContext current
  SetOutPath "$INSTDIR"
  ; A running ccmesh holds its exe open: the copy then asks to retry.
  File "/oname=ccmesh.exe" "${EXE}"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP}.lnk" "$INSTDIR\ccmesh.exe" "" "$INSTDIR\ccmesh.exe" 0
  WriteRegStr HKCU "Software\${APP}" "InstallDir" "$INSTDIR"

  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "ccmesh contributors"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\ccmesh.exe,0"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
  SectionGetSize ${SecApp} $0
  WriteRegDWORD HKCU "${UNINST_KEY}" "EstimatedSize" $0
SectionEnd

; Off unless the Run value is already there (.onInit), so a reinstall keeps
; what the app's setting chose; unticked, the value is removed. The value
; is the command line the app writes: the exe in the tray on the default
; data dir (os.UserConfigDir is %APPDATA%).
Section /o "Start ccmesh at login (in the tray)" SecRun
  SetShellVarContext current
  WriteRegStr HKCU "${RUN_KEY}" "${RUN_VALUE}" '"$INSTDIR\ccmesh.exe" --minimized --data "$APPDATA\ccmesh"'
SectionEnd

Section "-run key off" SecRunOff
  ${IfNot} ${SectionIsSelected} ${SecRun}
    DeleteRegValue HKCU "${RUN_KEY}" "${RUN_VALUE}"
  ${EndIf}
SectionEnd

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP|MB_OK "ccmesh needs 64-bit Windows."
    Abort
  ${EndIf}
  ${IfNot} ${AtLeastWin10}
    MessageBox MB_ICONSTOP|MB_OK "ccmesh needs Windows 10 or later."
    Abort
  ${EndIf}
  ReadRegStr $0 HKCU "${RUN_KEY}" "${RUN_VALUE}"
  ${If} $0 != ""
    !insertmacro SelectSection ${SecRun}
  ${EndIf}
  ; The window needs the WebView2 runtime (part of Windows 11 and of
  ; current Windows 10); without it ccmesh still serves, headless.
  ; (the installer is 32-bit, so HKLM reads land in WOW6432Node, where
  ; the runtime registers)
  ReadRegStr $1 HKLM "SOFTWARE\Microsoft\EdgeUpdate\Clients\${WEBVIEW2_GUID}" "pv"
  ${If} $1 == ""
    ReadRegStr $1 HKCU "Software\Microsoft\EdgeUpdate\Clients\${WEBVIEW2_GUID}" "pv"
  ${EndIf}
  ${If} $1 == ""
  ${OrIf} $1 == "0.0.0.0"
    IfSilent +2
    MessageBox MB_ICONINFORMATION|MB_OK "The Microsoft Edge WebView2 runtime was not found. ccmesh's window needs it: install it from https://developer.microsoft.com/microsoft-edge/webview2/ (the Evergreen runtime)."
  ${EndIf}
FunctionEnd

Section "Uninstall"
  SetShellVarContext current
  Delete "$INSTDIR\ccmesh.exe"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  Delete "$SMPROGRAMS\${APP}.lnk"
  ; A Run value left behind would start a program that is gone.
  DeleteRegValue HKCU "${RUN_KEY}" "${RUN_VALUE}"
  DeleteRegKey HKCU "${UNINST_KEY}"
  DeleteRegKey HKCU "Software\${APP}"
SectionEnd
