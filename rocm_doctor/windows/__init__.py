"""Windows support: the platform seam (`host`), recording (`record`) and pure helpers shared by the Windows
probes, interpreters and checks (paths, environment scopes, DLL provenance, remediation text, error signatures).

Only `host.RealWindowsHost` touches Windows APIs (winreg, imported inside it); everything else is pure and runs
on Linux against recordings (`docs/windows.md`).
"""
