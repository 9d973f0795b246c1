package server

// ParseOptions splits a startup packet's options parameter into its
// name=value settings as the server applies them ("-c name=value",
// "-cname=value", "--name=value", backslash escapes): for a gateway that
// routes a connection by its settings before a server reads it
// (cmd/pivotdb's follower reads).
func ParseOptions(s string) [][2]string { return parseOptions(s) }
