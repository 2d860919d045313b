"""Windows support: the platform seam (`host`), recording (`record`) and pure helpers shared by the Windows
probes and interpreters (DLL provenance, remediation text, error signatures). The path helpers are
`parsers/windows_paths.py` and the environment scopes `knowledge/windows_scopes.py`, so checks read them too.

Only `host.RealWindowsHost` touches Windows APIs (winreg, imported inside it); everything else is pure and runs
on Linux against recordings (`docs/windows.md`).
"""
