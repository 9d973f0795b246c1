package raft

import (
	"fmt"

	"github.com/lni/dragonboat/v4/logger"
)

// engineLoggers are dragonboat's package loggers.
var engineLoggers = []string{
	"config", "dragonboat", "gossip", "logdb", "LogDB", "pebblekv", "raft",
	"raftpb", "raftlog", "registry", "rsm", "server", "settings", "tan", "tools", "transport",
}

// SetEngineLogLevel sets how much dragonboat logs, for every host of the
// process (its loggers are global): "error", "warning", "info" or "debug".
// Call it before Start: dragonboat's loggers are not safe to reconfigure
// while they log. At info it logs every election and snapshot.
func SetEngineLogLevel(level string) error {
	var l logger.LogLevel
	switch level {
	case "warning":
		l = logger.WARNING
	case "error":
		l = logger.ERROR
	case "info":
		l = logger.INFO
	case "debug":
		l = logger.DEBUG
	default:
		return fmt.Errorf("raft: unknown engine log level %q (want error, warning, info or debug)", level)
	}
	for _, name := range engineLoggers {
		logger.GetLogger(name).SetLevel(l)
	}
	return nil
}
