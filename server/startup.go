package server

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Request codes that take the place of a protocol version in the first
// packet (PostgreSQL's pqcomm.h).
const (
	cancelRequestCode = 80877102
	sslRequestCode    = 80877103
	gssEncRequestCode = 80877104

	// maxStartupPacket is PostgreSQL's MAX_STARTUP_PACKET_LENGTH.
	maxStartupPacket = 10000
	// protocol30 is the only protocol version spoken.
	protocol30 = 3<<16 | 0
)

// startup runs the connection's startup phase: encryption negotiation,
// CancelRequest, the startup packet, authentication and the session. It
// returns true when the connection is ready for the command loop.
//
// Startup packets are read straight from the socket, without a buffered
// reader, for two reasons. A TLS handshake that follows SSLRequest must start
// on the raw socket with no plaintext bytes already swallowed by a buffer
// (PostgreSQL rejects data pipelined after SSLRequest for the same reason);
// and a CancelRequest connection must never turn into a pgproto3 Backend.
// Only once the startup packet is accepted is the socket handed to pgproto3.
func (c *conn) startup() bool {
	c.nc.SetDeadline(time.Now().Add(c.srv.cfg.StartupTimeout))
	sslDone, gssDone := false, false
	for {
		body, err := c.readStartupPacket()
		if err != nil {
			c.startupFailed(err)
			return false
		}
		code := binary.BigEndian.Uint32(body)
		switch code {
		case sslRequestCode:
			if sslDone || len(body) != 4 {
				c.startupFailed(protocolViolation("invalid SSLRequest"))
				return false
			}
			sslDone = true
			if err := c.negotiateTLS(); err != nil {
				return false
			}
		case gssEncRequestCode:
			if gssDone || len(body) != 4 {
				c.startupFailed(protocolViolation("invalid GSSENCRequest"))
				return false
			}
			gssDone = true
			// GSSAPI encryption is not offered; the client goes on in the
			// clear (or tries SSL).
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return false
			}
		case cancelRequestCode:
			var req pgproto3.CancelRequest
			if err := req.Decode(body); err == nil {
				c.srv.cancelRequest(req.ProcessID, req.SecretKey)
			}
			// The requester gets no answer either way, as in PostgreSQL,
			// so that a wrong key reveals nothing.
			return false
		default:
			return c.acceptStartupMessage(code, body[4:])
		}
	}
}

// negotiateTLS answers an SSLRequest: 'N' without a certificate (the
// client continues in the clear or gives up, as its sslmode says), else 'S'
// followed by the TLS handshake on the raw socket.
//
// Nothing after the SSLRequest has been read yet (startup packets are read
// unbuffered), so bytes a client pipelined in plaintext after its
// SSLRequest reach the TLS handshake, which rejects them, and are never
// taken as a startup packet: that is PostgreSQL's defence against a
// man-in-the-middle injecting plaintext before the handshake
// (CVE-2021-23214).
func (c *conn) negotiateTLS() error {
	cfg := c.srv.cfg.TLS
	if cfg == nil {
		_, err := c.nc.Write([]byte{'N'})
		return err
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return err
	}
	tc := tls.Server(c.nc, cfg)
	if err := tc.Handshake(); err != nil {
		c.log.Debug("server: TLS handshake failed", "err", err)
		return err
	}
	c.nc = tc
	c.tls = true
	return nil
}

func protocolViolation(msg string) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: msg, Fatal: true}
}

// readStartupPacket reads one length-prefixed startup packet and returns its
// body (from the version or request code on).
func (c *conn) readStartupPacket() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(hdr[:])))
	if n < 8 || n > maxStartupPacket {
		return nil, protocolViolation("invalid length of startup packet")
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		return nil, err
	}
	return body, nil
}

// startupFailed reports a startup error when it is one the client should
// see; socket errors just end the connection.
func (c *conn) startupFailed(err error) {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		c.writeDirect(e)
		return
	}
	c.log.Debug("server: startup failed", "err", err)
}

// acceptStartupMessage handles a StartupMessage with the given version and
// parameter bytes, through to the first ReadyForQuery.
func (c *conn) acceptStartupMessage(version uint32, rest []byte) bool {
	major, minor := version>>16, version&0xffff
	if major != 3 {
		c.startupFailed(&sqlerr.Error{Code: sqlerr.FeatureNotSupported, Fatal: true,
			Message: fmt.Sprintf("unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", major, minor)})
		return false
	}
	params, err := parseStartupParams(rest)
	if err != nil {
		c.startupFailed(err)
		return false
	}

	c.gate = newGate(c.nc, c.srv.cfg.Memory, c.srv.cfg.MaxStatementMemory, c.srv.cfg.MaxMessageSize)
	c.be = pgproto3.NewBackend(c.gate, c.nc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)

	if c.srv.cfg.TLSRequired && !c.tls {
		// What PostgreSQL says when only hostssl lines match.
		db := params["database"]
		if db == "" {
			db = params["user"]
		}
		c.log.Info("server: plaintext connection refused (TLS required)", "client", clientHost(c.raw.RemoteAddr()))
		c.srv.cfg.Observer.ConnectionRefused("tls")
		c.fatal(&sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpec, Fatal: true,
			Message: fmt.Sprintf("no pg_hba.conf entry for host %q, user %q, database %q, no encryption",
				clientHost(c.raw.RemoteAddr()), params["user"], db),
			Hint: "The server accepts only SSL connections (--tls-required); connect with sslmode=require."})
		return false
	}

	if !c.srv.admit(c) {
		c.srv.cfg.Observer.ConnectionRefused("too_many")
		c.fatal(&sqlerr.Error{Code: sqlerr.TooManyConnections, Message: "sorry, too many clients already", Fatal: true})
		return false
	}

	// A newer 3.x client is told that 3.0 is spoken, with the protocol
	// options (_pq_.*) it asked for that are not understood (all of them),
	// and carries on with 3.0 as PostgreSQL's clients do.
	var unknownOpts []string
	for _, k := range sortedKeys(params) {
		if strings.HasPrefix(k, "_pq_.") {
			unknownOpts = append(unknownOpts, k)
		}
	}
	if minor > 0 || len(unknownOpts) > 0 {
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: protocol30 & 0xffff, UnrecognizedOptions: unknownOpts})
	}

	user := params["user"]
	if user == "" {
		c.fatal(&sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpec, Message: "no PostgreSQL user name specified in startup packet", Fatal: true})
		return false
	}
	database := params["database"]
	if database == "" {
		database = user
	}

	if !c.authenticate(user) {
		return false
	}

	sess, err := c.srv.engine.NewSession(database, user)
	if err != nil {
		e := *sqlerr.As(err)
		e.Fatal = true // without a session there is nothing to continue with
		c.fatal(&e)
		return false
	}
	c.sess = sess

	c.applyStartupSettings(params)
	// The settings just applied are part of the initial report below.
	c.sess.TakeParameterChanges()
	c.sendSessionEvents()
	for _, p := range c.sess.InitialParameters() {
		c.send(&pgproto3.ParameterStatus{Name: p.Name, Value: p.Value})
	}

	c.secret = make([]byte, 4)
	rand.Read(c.secret)
	c.registerBackend(database, user, params)
	c.srv.cfg.Observer.ConnectionOpened()
	c.srv.publishKey(c)
	// From here the connection is a session: Shutdown must not close it
	// without FATAL 57P01, as it closes connections still in startup, so
	// it is busy until the command loop makes it idle (becomeIdle sends
	// the FATAL when the server is draining by then).
	c.mu.Lock()
	if c.state == stateClosed {
		c.mu.Unlock()
		return false
	}
	c.state = stateBusy
	c.mu.Unlock()
	c.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.send(&pgproto3.ReadyForQuery{TxStatus: c.sess.TxStatus()})
	if err := c.flush(); err != nil {
		return false
	}
	c.nc.SetDeadline(time.Time{})
	return true
}

// fatal sends e through the backend and flushes it.
func (c *conn) fatal(e *sqlerr.Error) {
	c.send(errorResponse(e))
	c.flush()
}

// parseStartupParams parses the name/value pairs of a startup packet: pairs
// of NUL-terminated strings ended by an empty name.
func parseStartupParams(b []byte) (map[string]string, error) {
	bad := protocolViolation("invalid startup packet layout: expected terminator as last byte")
	params := make(map[string]string)
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return nil, bad
		}
		if i == 0 {
			if len(b) != 1 {
				return nil, bad
			}
			return params, nil
		}
		name := string(b[:i])
		b = b[i+1:]
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			return nil, bad
		}
		params[name] = string(b[:j])
		b = b[j+1:]
	}
}

// startupOnly are startup parameters that are not run-time settings.
var startupOnly = map[string]bool{"user": true, "database": true, "options": true, "replication": true}

// startupParameterSetter is implemented by sessions that take startup
// settings directly (*sql.Session does). Others get a SET statement per
// setting, which is what a startup setting means in PostgreSQL.
type startupParameterSetter interface {
	SetStartupParameter(name, value string) error
}

// applyStartupSettings applies the run-time settings a client put in its
// startup packet (application_name, client_encoding, DateStyle, ...) and the
// "-c name=value" switches of its options parameter. The session owns the
// settings; the server only hands them over.
//
// A setting the session rejects is reported as a WARNING and skipped rather
// than failing the connection: drivers send settings by default (JDBC sends
// its JVM's TimeZone) that PivotDB may not accept.
func (c *conn) applyStartupSettings(params map[string]string) {
	type setting struct{ name, value string }
	var list []setting
	for _, k := range sortedKeys(params) {
		if !startupOnly[k] && !strings.HasPrefix(k, "_pq_.") {
			list = append(list, setting{k, params[k]})
		}
	}
	for _, kv := range parseOptions(params["options"]) {
		list = append(list, setting{kv[0], kv[1]})
	}
	set := c.runSet
	if d, ok := c.sess.(startupParameterSetter); ok {
		set = d.SetStartupParameter
	}
	for _, s := range list {
		if err := set(s.name, s.value); err != nil {
			c.send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: sqlerr.Warning,
				Message: fmt.Sprintf("startup parameter %q ignored: %s", s.name, sqlerr.As(err).Message)})
		}
	}
}

// runSet runs SET name = 'value' on the session.
func (c *conn) runSet(name, value string) error {
	if !isSettingName(name) {
		return sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	ctx, done := c.statementContext()
	defer done()
	p, err := c.sess.Prepare(ctx, "SET "+name+" = "+quoteLiteral(value), nil)
	if err != nil {
		return err
	}
	res, err := c.sess.Execute(ctx, p, nil)
	if err != nil {
		return err
	}
	defer res.Close()
	for {
		row, err := res.Next(ctx)
		if err != nil || row == nil {
			return err
		}
	}
}

// isSettingName accepts the names SET can take without quoting.
func isSettingName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r == '.' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return true
}

// quoteLiteral quotes s as a standard-conforming SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// parseOptions extracts the settings of libpq's options parameter:
// whitespace-separated switches "-c name=value", "-cname=value" or
// "--name=value", where a backslash escapes the next character. Other
// switches are ignored.
func parseOptions(s string) [][2]string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	var out [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var kv string
		switch {
		case w == "-c" && i+1 < len(words):
			i++
			kv = words[i]
		case strings.HasPrefix(w, "-c"):
			kv = w[2:]
		case strings.HasPrefix(w, "--"):
			kv = w[2:]
		default:
			continue
		}
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		// PostgreSQL lets dashes stand for underscores in switches.
		out = append(out, [2]string{strings.ReplaceAll(name, "-", "_"), value})
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// cancelRequest cancels the running statement of the connection with this
// process id, if the secret matches. It reports whether one matched.
func (s *Server) cancelRequest(pid uint32, secret []byte) bool {
	s.mu.Lock()
	c := s.byPID[pid]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		return false
	}
	c.cancelRunning()
	return true
}
