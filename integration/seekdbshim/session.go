package seekdbshim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

var errUpstreamGone = errors.New("seekdbshim: upstream connection closed")

// session relays one client connection to its own upstream connection.
//
// The session goroutine reads client packets and forwards them upstream
// (intercepting the commands the shim emulates); a second goroutine reads
// upstream packets and forwards them to the client. While the shim runs
// statements of its own on the upstream session (owned is set), upstream
// packets go to upCh instead. The MySQL protocol is strictly
// request/response, so when a client sends a new command the previous
// response has been delivered completely and the upstream is idle.
type session struct {
	shim   *Shim
	client net.Conn
	cr     *bufio.Reader
	up     net.Conn
	ur     *bufio.Reader

	wmu    sync.Mutex // serialises writes to the client
	owned  atomic.Bool
	upCh   chan packet
	upDone chan struct{} // closed when the upstream reader exits
	quit   chan struct{} // closed by close()
	once   sync.Once

	serverCaps   uint32 // capabilities offered in the (rewritten) greeting
	deprecateEOF bool   // CLIENT_DEPRECATE_EOF negotiated
}

func newSession(s *Shim, c net.Conn) *session {
	return &session{
		shim:   s,
		client: c,
		cr:     bufio.NewReader(c),
		upCh:   make(chan packet),
		upDone: make(chan struct{}),
		quit:   make(chan struct{}),
	}
}

func (s *session) close() {
	s.once.Do(func() {
		close(s.quit)
		s.client.Close()
		if s.up != nil {
			s.up.Close()
		}
	})
}

func (s *session) run() {
	defer s.close()
	up, err := net.DialTimeout("tcp", s.shim.upstream, dialTimeout)
	if err != nil {
		s.writeClient(packet{0, wire.AppendErr(nil, &mysql.MyError{Code: 2003 /* CR_CONN_HOST_ERROR */, State: "HY000",
			Message: "seekdbshim: cannot connect to upstream: " + err.Error()})})
		return
	}
	s.shim.mu.Lock()
	closed := s.shim.closed
	s.up = up
	s.shim.mu.Unlock()
	if closed {
		up.Close()
		return
	}
	s.ur = bufio.NewReader(up)

	greeting, err := readPacket(s.ur)
	if err != nil {
		return
	}
	greeting.payload, s.serverCaps = rewriteGreeting(greeting.payload, s.shim.opts.Version)
	if err := s.writeClient(greeting); err != nil {
		return
	}
	go s.readUpstream()
	defer func() {
		s.close()
		<-s.upDone // the reader exits once both connections are closed
	}()

	first := true
	for {
		p, err := readPacket(s.cr)
		if err != nil {
			return
		}
		if first { // HandshakeResponse41 (or an SSLRequest, which we did not offer)
			first = false
			if len(p.payload) >= 4 {
				caps := binary.LittleEndian.Uint32(p.payload)
				if caps&wire.CapSSL != 0 {
					return
				}
				s.deprecateEOF = caps&s.serverCaps&wire.CapDeprecateEOF != 0
			}
		}
		// A command starts with sequence number 0; everything else (the
		// authentication exchange, LOCAL INFILE data, a command of 16 MiB or
		// more) is forwarded as is.
		if p.seq == 0 && len(p.payload) > 0 && len(p.payload) < wire.MaxPayload {
			if err := s.command(p); err != nil {
				return
			}
			continue
		}
		if err := s.writeUp(p); err != nil {
			return
		}
	}
}

// rewriteGreeting replaces the server version in a Protocol::HandshakeV10
// payload, stops offering TLS and compression, presents the server as a
// MySQL (not MariaDB) server and clears MariaDB's extended capabilities. It
// returns the new payload and the capabilities it offers.
func rewriteGreeting(p []byte, version string) ([]byte, uint32) {
	if len(p) == 0 || p[0] != 10 {
		return p, 0 // an ERR packet, or nothing we understand
	}
	nul := bytes.IndexByte(p[1:], 0)
	if nul < 0 {
		return p, 0
	}
	rest := append([]byte(nil), p[1+nul+1:]...)
	// rest: connection id (4), scramble part 1 (8), filler (1), capabilities
	// low (2), charset (1), status (2), capabilities high (2), scramble
	// length (1), reserved (6) + MariaDB extended capabilities (4), ...
	if len(rest) < 15 {
		return p, 0
	}
	caps := uint32(binary.LittleEndian.Uint16(rest[13:]))
	if len(rest) >= 20 {
		caps |= uint32(binary.LittleEndian.Uint16(rest[18:])) << 16
	}
	caps = caps&^(wire.CapSSL|wire.CapCompress|wire.CapZstdCompression) | wire.CapLongPassword
	binary.LittleEndian.PutUint16(rest[13:], uint16(caps))
	if len(rest) >= 20 {
		binary.LittleEndian.PutUint16(rest[18:], uint16(caps>>16))
	}
	if len(rest) >= 31 {
		clear(rest[27:31])
	}
	out := make([]byte, 0, 2+len(version)+len(rest))
	out = append(out, 10)
	out = append(out, version...)
	out = append(out, 0)
	return append(out, rest...), caps
}

func (s *session) readUpstream() {
	defer close(s.upDone)
	for {
		p, err := readPacket(s.ur)
		if err != nil {
			s.client.Close() // let the client see the upstream went away
			return
		}
		if s.owned.Load() {
			select {
			case s.upCh <- p:
			case <-s.quit:
				return
			}
			continue
		}
		if err := s.writeClient(p); err != nil {
			s.up.Close()
			return
		}
	}
}

func (s *session) writeClient(p packet) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return writePacket(s.client, p)
}

func (s *session) writeUp(p packet) error {
	return writePacket(s.up, p)
}

// command handles one client command packet (sequence number 0).
func (s *session) command(p packet) error {
	switch p.payload[0] {
	case wire.ComQuery, wire.ComStmtPrepare:
		query := string(p.payload[1:])
		if p.payload[0] == wire.ComQuery {
			if src, dst, ok := parseFork(query); ok {
				return s.handleFork(src, dst)
			}
		}
		busy, err := s.busyDDL(query)
		if err != nil {
			return err
		}
		if busy {
			if p.payload[0] == wire.ComQuery {
				// DDL commits implicitly before it runs, also when it
				// then fails.
				if _, err := s.exec("COMMIT"); err != nil && !isSQLError(err) {
					return err
				}
			}
			return s.replyErr(&mysql.MyError{Code: BusyErrorCode, State: BusyErrorState, Message: BusyErrorMessage})
		}
		// The rewritten command stays in one packet, as the client sent it.
		if q, ok := rewriteVersion(query, s.shim.opts.Version); ok && len(q)+1 < wire.MaxPayload {
			p.payload = append([]byte{p.payload[0]}, q...)
		}
	}
	return s.writeUp(p)
}

func (s *session) replyErr(e *mysql.MyError) error {
	return s.writeClient(packet{1, wire.AppendErr(nil, e)})
}

// isSQLError reports whether err is a server error (*mysql.MyError).
func isSQLError(err error) bool {
	var e *mysql.MyError
	return errors.As(err, &e)
}

// replyResult answers the client's command with err (a *mysql.MyError) or
// an OK packet carrying r's status flags, without those announcing more
// results or session state. Connection errors are returned.
func (s *session) replyResult(r *result, err error) error {
	var e *mysql.MyError
	switch {
	case errors.As(err, &e):
		return s.replyErr(e)
	case err != nil:
		return err
	}
	status := r.status &^ (wire.StatusSessionStateChanged | wire.StatusMoreResults)
	return s.writeClient(packet{1, wire.AppendOK(nil, 0, status, 0, "", false)})
}

// next returns the next upstream packet of a statement the shim runs itself.
func (s *session) next() (packet, error) {
	select {
	case p := <-s.upCh:
		if len(p.payload) == 0 {
			return p, malformed("empty packet")
		}
		return p, nil
	case <-s.upDone:
		return packet{}, errUpstreamGone
	}
}

// malformed is wire.ErrMalformed for an upstream packet that is not what.
func malformed(what string) error {
	return fmt.Errorf("seekdbshim: %s from upstream: %w", what, wire.ErrMalformed)
}

// exec runs query on the client's upstream session and reads the whole
// response. Server errors are returned as *mysql.MyError; any other error
// means the connection is unusable.
//
// The client negotiated the session's capabilities: under
// CLIENT_DEPRECATE_EOF no EOF packet follows the column definitions and an
// OK packet with an EOF header ends the rows. wire.Response knows only the
// classic shape (the proxy never negotiates CLIENT_DEPRECATE_EOF), so exec
// follows the response itself.
func (s *session) exec(query string) (*result, error) {
	s.owned.Store(true)
	defer s.owned.Store(false)
	if err := s.writeUp(packet{0, append([]byte{wire.ComQuery}, query...)}); err != nil {
		return nil, err
	}
	p, err := s.next()
	if err != nil {
		return nil, err
	}
	switch p.payload[0] {
	case wire.OKHeader:
		ok, valid := wire.ParseOK(p.payload)
		if !valid {
			return nil, malformed("OK packet")
		}
		return &result{status: ok.Status}, nil
	case wire.ErrHeader:
		return nil, wire.ParseErr(p.payload)
	case wire.LocalInfileHeader:
		return nil, errors.New("seekdbshim: unexpected LOCAL INFILE request")
	}
	n, _, valid := wire.LenEnc(p.payload)
	if !valid {
		return nil, malformed("column count")
	}
	r := &result{}
	for range n {
		if p, err = s.next(); err != nil {
			return nil, err
		}
		def, _, valid := wire.ParseColumnDef(p.payload)
		if !valid {
			return nil, malformed("column definition")
		}
		r.columns = append(r.columns, def.Name)
	}
	if !s.deprecateEOF {
		if _, err := s.next(); err != nil { // EOF after the column definitions
			return nil, err
		}
	}
	for {
		if p, err = s.next(); err != nil {
			return nil, err
		}
		switch first, length := int(p.payload[0]), len(p.payload); {
		case first == wire.ErrHeader:
			return nil, wire.ParseErr(p.payload)
		case !s.deprecateEOF && wire.IsEOF(first, length):
			r.status, _ = wire.EOFStatus(p.payload)
			return r, nil
		case s.deprecateEOF && first == wire.EOFHeader && length < wire.MaxPayload:
			// A row starting with 0xFE holds a value of 16 MiB or more.
			ok, valid := wire.ParseOK(p.payload)
			if !valid {
				return nil, malformed("end of rows")
			}
			r.status = ok.Status
			return r, nil
		}
		row, err := wire.ParseTextRow(p.payload, len(r.columns))
		if err != nil {
			return nil, fmt.Errorf("seekdbshim: upstream row: %w", err)
		}
		r.rows = append(r.rows, row)
	}
}

// currentDB returns the session's default database ("" if none).
func (s *session) currentDB() (string, error) {
	r, err := s.exec("SELECT DATABASE()")
	if err != nil {
		return "", err
	}
	if len(r.rows) == 1 && len(r.rows[0]) == 1 && r.rows[0][0] != nil {
		return *r.rows[0][0], nil
	}
	return "", nil
}

// busyDDL reports whether query contains DDL on a table that a recent FORK
// TABLE keeps busy.
func (s *session) busyDDL(query string) (bool, error) {
	busy := s.shim.busyKeys()
	if len(busy) == 0 {
		return false, nil
	}
	tables, dbs := ddlTargets(query)
	if len(tables) == 0 && len(dbs) == 0 {
		return false, nil
	}
	isBusy := make(map[string]bool, len(busy))
	for _, k := range busy {
		isBusy[k] = true
	}
	for _, db := range dbs {
		prefix := strings.ToLower(db) + "."
		for _, k := range busy {
			if strings.HasPrefix(k, prefix) {
				return true, nil
			}
		}
	}
	cur, curKnown := "", false
	for _, t := range tables {
		if t.db == "" && !curKnown {
			var err error
			if cur, err = s.currentDB(); err != nil {
				if isSQLError(err) {
					continue
				}
				return false, err
			}
			curKnown = true
		}
		if isBusy[t.key(cur)] {
			return true, nil
		}
	}
	return false, nil
}

func (s *session) handleFork(src, dst tableRef) error {
	r, err := s.fork(src, dst)
	return s.replyResult(r, err)
}

// fork emulates FORK TABLE src TO dst on the client's upstream session.
func (s *session) fork(src, dst tableRef) (_ *result, err error) {
	// FORK TABLE is DDL: it commits the open transaction first.
	if _, err := s.exec("COMMIT"); err != nil {
		return nil, err
	}
	cur := ""
	if src.db == "" || dst.db == "" {
		if cur, err = s.currentDB(); err != nil {
			return nil, err
		}
		if cur == "" {
			return nil, &mysql.MyError{Code: wire.ErNoDB, State: "3D000", Message: "No database selected"}
		}
	}
	// seekdb checks the source before the destination; MariaDB's CREATE
	// TABLE ... LIKE does it the other way round, so look at the source
	// first. Its definition also carries the AUTO_INCREMENT counter.
	r, err := s.exec("SHOW CREATE TABLE " + src.sql())
	if err != nil {
		return nil, err
	}
	autoInc := uint64(0)
	if len(r.rows) == 1 && len(r.rows[0]) >= 2 && r.rows[0][1] != nil {
		autoInc = parseAutoIncrement(*r.rows[0][1])
	}
	// CREATE TABLE ... LIKE copies columns, indexes and table options but
	// neither foreign keys nor triggers, like FORK TABLE.
	if _, err := s.exec("CREATE TABLE " + dst.sql() + " LIKE " + src.sql()); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.exec("DROP TABLE IF EXISTS " + dst.sql())
		}
	}()
	cols, err := s.copiedColumns(src)
	if err != nil {
		return nil, err
	}
	if len(cols) > 0 {
		list := strings.Join(cols, ", ")
		if _, err := s.exec("SET STATEMENT sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO') FOR " +
			"INSERT INTO " + dst.sql() + " (" + list + ") SELECT " + list + " FROM " + src.sql()); err != nil {
			return nil, err
		}
	}
	if autoInc > 0 {
		if _, err := s.exec("ALTER TABLE " + dst.sql() + " AUTO_INCREMENT = " +
			strconv.FormatUint(autoInc, 10)); err != nil {
			return nil, err
		}
	}
	r, err = s.exec("COMMIT")
	if err != nil {
		return nil, err
	}
	s.shim.markBusy(src.key(cur), dst.key(cur))
	s.shim.forks.Add(1)
	return r, nil
}

// copiedColumns are the columns of src a fork copies, quoted: all but the
// generated ones, which are computed.
func (s *session) copiedColumns(src tableRef) ([]string, error) {
	r, err := s.exec("SHOW COLUMNS FROM " + src.sql())
	if err != nil {
		return nil, err
	}
	field, extra := -1, -1
	for i, c := range r.columns {
		switch strings.ToLower(c) {
		case "field":
			field = i
		case "extra":
			extra = i
		}
	}
	if field < 0 || extra < 0 {
		return nil, fmt.Errorf("seekdbshim: unexpected SHOW COLUMNS result %q", r.columns)
	}
	var cols []string
	for _, row := range r.rows {
		if row[field] == nil || row[extra] != nil && strings.Contains(strings.ToUpper(*row[extra]), "GENERATED") {
			continue // generated columns are computed, not copied
		}
		cols = append(cols, quoteIdent(*row[field]))
	}
	return cols, nil
}

// parseAutoIncrement returns the AUTO_INCREMENT=n table option of a SHOW
// CREATE TABLE statement, 0 if there is none. The table options follow the
// "\n)" that closes the column list (comments never contain a raw newline).
func parseAutoIncrement(create string) uint64 {
	end := strings.Index(create, "\n)")
	if end < 0 {
		return 0
	}
	opts := create[end+2:]
	const key = " AUTO_INCREMENT="
	i := strings.Index(strings.ToUpper(opts), key)
	if i < 0 {
		return 0
	}
	digits := opts[i+len(key):]
	j := 0
	for j < len(digits) && '0' <= digits[j] && digits[j] <= '9' {
		j++
	}
	n, _ := strconv.ParseUint(digits[:j], 10, 64)
	return n
}
