package server

import "time"

// Observer hears about connections and statements, for metrics (package
// metrics implements it). Its methods are called from connection
// goroutines concurrently and must be cheap.
type Observer interface {
	ConnectionOpened()
	ConnectionClosed()
	// ConnectionRefused counts a client turned away during startup: over
	// MaxConnections ("too_many"), failed authentication ("auth") or a
	// plaintext client when TLS is required ("tls").
	ConnectionRefused(reason string)
	// StatementDone reports a statement that ran: its command tag ("" when
	// it failed before having one), how long it took, and its error.
	StatementDone(tag string, d time.Duration, err error)
}

// noObserver is the Observer of a Config without one.
type noObserver struct{}

func (noObserver) ConnectionOpened()                          {}
func (noObserver) ConnectionClosed()                          {}
func (noObserver) ConnectionRefused(string)                   {}
func (noObserver) StatementDone(string, time.Duration, error) {}
