package server

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"github.com/pivotdb/pivotdb/sql/auth"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// AuthMethod is how connections authenticate (--auth).
type AuthMethod uint8

const (
	// AuthTrust admits every user without a password. design.md §2 allows
	// it on loopback addresses only; cmd/pivotdb enforces that.
	AuthTrust AuthMethod = iota
	// AuthSCRAM makes every connection authenticate with SCRAM-SHA-256.
	AuthSCRAM
	// AuthPassword makes every connection send its password in the clear
	// (AuthenticationCleartextPassword, PostgreSQL's "password" method),
	// checked against the same stored SCRAM verifiers: for clients without
	// SCRAM. The password crosses the network as it is, so use it over TLS.
	AuthPassword
)

// ParseAuthMethod reads an --auth value.
func ParseAuthMethod(s string) (AuthMethod, error) {
	switch strings.ToLower(s) {
	case "trust":
		return AuthTrust, nil
	case "scram", "scram-sha-256":
		return AuthSCRAM, nil
	case "password":
		return AuthPassword, nil
	}
	return 0, fmt.Errorf("unknown authentication method %q (want trust, scram or password)", s)
}

func (m AuthMethod) String() string {
	switch m {
	case AuthSCRAM:
		return "scram"
	case AuthPassword:
		return "password"
	}
	return "trust"
}

// NeedsPasswords reports whether connections prove a password: every
// method but trust, checked against the stored verifiers
// (Config.Passwords).
func (m AuthMethod) NeedsPasswords() bool { return m != AuthTrust }

// PasswordStore looks up a user's stored SCRAM-SHA-256 verifier (in
// PostgreSQL's text form, see package sql/auth). ok is false for a user
// that does not exist or has no password; neither can log in with SCRAM.
type PasswordStore interface {
	PasswordVerifier(user string) (verifier string, ok bool)
}

const scramMechanism = "SCRAM-SHA-256"

// mockSecret keys the fake salts of unknown users (see mockCredentials).
var mockSecret = func() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}()

// mockCredentials are what an unknown user (or one without a password) is
// challenged with. Like PostgreSQL's scram_mock_salt, the exchange runs to
// its end and fails only at the proof, with the same message as a wrong
// password, so a client cannot tell which user names exist. The salt is
// stable per name for the life of the process, so repeated attempts see
// the same salt as they would for a real user.
func mockCredentials(user string) scram.StoredCredentials {
	mac := hmac.New(sha256.New, mockSecret)
	mac.Write([]byte(user))
	sum := mac.Sum(nil)
	keys := make([]byte, 64)
	rand.Read(keys)
	return scram.StoredCredentials{
		KeyFactors: scram.KeyFactors{Salt: string(sum[:auth.SaltLen]), Iters: auth.Iterations},
		StoredKey:  keys[:32],
		ServerKey:  keys[32:],
	}
}

func authFailed(user string) *sqlerr.Error {
	return &sqlerr.Error{Code: sqlerr.InvalidPassword, Fatal: true,
		Message: fmt.Sprintf("password authentication failed for user %q", user)}
}

// authenticate runs the configured authentication for user and reports
// whether the client may go on; on failure the FATAL has been sent.
// AuthenticationOk is queued, not flushed, on success.
func (c *conn) authenticate(user string) bool {
	var err error
	switch c.srv.cfg.Auth {
	case AuthSCRAM:
		err = c.scramExchange(user)
	case AuthPassword:
		err = c.passwordExchange(user)
	default:
		c.send(&pgproto3.AuthenticationOk{})
		return true
	}
	host := clientHost(c.raw.RemoteAddr())
	if err == nil {
		c.srv.authThrottle.succeeded(host)
		c.send(&pgproto3.AuthenticationOk{})
		return true
	}
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		// The socket failed or the client went away mid-exchange.
		c.log.Debug("server: authentication aborted", "user", user, "err", err)
		return false
	}
	// Every failed exchange counts, malformed ones too: a client that
	// breaks off with garbage must not get its answer faster.
	delay := c.srv.authThrottle.failed(host)
	c.log.Info("server: authentication failed", "user", user, "client", host, "reason", e.Detail, "delay", delay)
	c.srv.authSleep(c.ctx, delay)
	// The reason stays in the server log, as in PostgreSQL; the client
	// learns only that authentication failed.
	e.Detail = ""
	c.srv.cfg.Observer.ConnectionRefused("auth")
	c.fatal(e)
	return false
}

// scramExchange is the SASL conversation of PostgreSQL's protocol:
// AuthenticationSASL, SASLInitialResponse, AuthenticationSASLContinue,
// SASLResponse, AuthenticationSASLFinal. Only SCRAM-SHA-256 without channel
// binding is offered (no -PLUS mechanism), so clients send the "n" or "y"
// GS2 flag. The user name is the startup packet's; the one inside the SCRAM
// message is ignored, as PostgreSQL does (libpq sends an empty one).
func (c *conn) scramExchange(user string) error {
	fail := func(why string) error {
		e := authFailed(user)
		e.Detail = why
		return e
	}
	creds := mockCredentials(user)
	known := false
	if c.srv.cfg.Passwords != nil {
		if v, ok := c.srv.cfg.Passwords.PasswordVerifier(user); ok {
			sc, err := auth.Parse(v)
			if err != nil {
				c.log.Error("server: stored password verifier is invalid", "user", user, "err", err)
			} else {
				creds, known = sc, true
			}
		}
	}
	srv, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) { return creds, nil })
	if err != nil {
		return err
	}
	conv := srv.NewConversation()

	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	msg, err := c.authAnswer(pgproto3.AuthTypeSASL)
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocolViolation(fmt.Sprintf("expected SASL response, got %T", msg))
	}
	if first.AuthMechanism != scramMechanism {
		return protocolViolation("client selected an invalid SASL authentication mechanism")
	}
	s1, err := conv.Step(string(first.Data))
	if err != nil {
		return protocolViolation("malformed SCRAM message: " + err.Error())
	}
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(s1)})
	msg, err = c.authAnswer(pgproto3.AuthTypeSASLContinue)
	if err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return protocolViolation(fmt.Sprintf("expected SASL response, got %T", msg))
	}
	s2, err := conv.Step(string(final.Data))
	switch {
	case err != nil && strings.Contains(err.Error(), "proof invalid"):
		if !known {
			return fail("user does not exist or has no password")
		}
		return fail("wrong password")
	case err != nil:
		return protocolViolation("malformed SCRAM message: " + err.Error())
	case !conv.Valid() || !known:
		return fail("user does not exist or has no password")
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(s2)})
	return nil
}

// passwordExchange asks for the password in the clear
// (AuthenticationCleartextPassword) and checks it against the user's stored
// SCRAM verifier (auth.CheckPassword), as PostgreSQL's "password" method
// does with SCRAM secrets. An unknown user, or one without a password, is
// checked against mock credentials, so that the answer takes as long and
// says the same as for a wrong password. An empty password is refused
// before any check, as PostgreSQL refuses it.
func (c *conn) passwordExchange(user string) error {
	fail := func(why string) error {
		e := authFailed(user)
		e.Detail = why
		return e
	}
	c.send(&pgproto3.AuthenticationCleartextPassword{})
	msg, err := c.authAnswer(pgproto3.AuthTypeCleartextPassword)
	if err != nil {
		return err
	}
	pm, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return protocolViolation(fmt.Sprintf("expected password response, got %T", msg))
	}
	if pm.Password == "" {
		return fail("empty password returned by client")
	}
	creds := mockCredentials(user)
	known := false
	if c.srv.cfg.Passwords != nil {
		if v, ok := c.srv.cfg.Passwords.PasswordVerifier(user); ok {
			sc, err := auth.Parse(v)
			if err != nil {
				c.log.Error("server: stored password verifier is invalid", "user", user, "err", err)
			} else {
				creds, known = sc, true
			}
		}
	}
	match, err := auth.CheckPassword(creds, pm.Password)
	switch {
	case err != nil:
		return fail("password check failed: " + err.Error())
	case !known:
		return fail("user does not exist or has no password")
	case !match:
		return fail("wrong password")
	}
	return nil
}

// authReceiveError turns a failed read during authentication into what
// the client sees: socket errors end the connection silently, anything
// else (an unknown message type, a body that does not decode, an
// oversized message) is a protocol violation.
func (c *conn) authReceiveError(err error) error {
	var ne net.Error
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) {
		return err
	}
	return protocolViolation("invalid authentication message: " + err.Error())
}

// authAnswer sends the authentication request queued before it and reads
// the client's answer to it, as a message of the kind authType asks for.
func (c *conn) authAnswer(authType uint32) (pgproto3.FrontendMessage, error) {
	if err := c.flush(); err != nil {
		return nil, err
	}
	if err := c.be.SetAuthType(authType); err != nil {
		return nil, err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return nil, c.authReceiveError(err)
	}
	return msg, nil
}
