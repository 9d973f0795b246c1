package raft

// UseDragonboatTransport makes the hosts started after it use dragonboat's
// own TCP transport (true) or PivotDB's (transport.go).
func UseDragonboatTransport(on bool) { useDragonboatTransport = on }
