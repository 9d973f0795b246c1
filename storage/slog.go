package storage

import (
	"fmt"
	"log/slog"
	"os"
)

// SlogLogger adapts a slog.Logger for Pebble: Pebble's routine Infof lines
// (WAL recovery, compactions) go to debug level so the server log shows only
// what an operator needs; errors stay errors.
type SlogLogger struct{ L *slog.Logger }

func (l SlogLogger) Infof(format string, args ...any) {
	l.L.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l SlogLogger) Errorf(format string, args ...any) {
	l.L.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l SlogLogger) Fatalf(format string, args ...any) {
	l.L.Error(fmt.Sprintf(format, args...), "component", "pebble", "fatal", true)
	os.Exit(1)
}
