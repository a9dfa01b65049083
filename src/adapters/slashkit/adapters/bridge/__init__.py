"""The bridge every JavaScript host shares: a resident Python helper (`helper`) that serves the core over a small
wire format (`protocol`, docs/bridge.md), the bridge between the two (`bridge`, `state`, `forecast`), and the one
TypeScript client (`client.ts`) a host's shim imports. Nothing here names a host's payloads."""
