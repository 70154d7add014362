package wire

import (
	"errors"
	"slices"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Packets of responses, as payloads.
var (
	okDone   = AppendOK(nil, 1, StatusAutocommit, 0, "", false)
	okMore   = AppendOK(nil, 1, StatusAutocommit|StatusMoreResults, 0, "", false)
	errPkt   = AppendErr(nil, errorFor(1146))
	eofDone  = AppendEOF(nil, StatusAutocommit, 0)
	eofMore  = AppendEOF(nil, StatusAutocommit|StatusMoreResults, 0)
	eofCurs  = AppendEOF(nil, StatusAutocommit|StatusCursorExists, 0)
	colCount = AppendLenEnc(nil, 2)
	colDef   = TextColumnDef("c")
	row      = AppendTextRow(nil, []*string{strp("1"), nil})
	infile   = append([]byte{LocalInfileHeader}, "/tmp/f.csv"...)
	prepOK   = []byte{OKHeader, 7, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0}
)

func strp(s string) *string { return &s }

// responseCase is a response's packets and how a Response of shape (for a
// command opening a cursor or not) reads them: the kinds, the index of
// the packet it ends with (-1: the response goes on) and the last status.
type responseCase struct {
	name   string
	shape  Shape
	cursor bool
	pkts   [][]byte
	want   []Kind
	end    int
	status uint16
}

// run walks the packets, with CLIENT_DEPRECATE_EOF if deprecateEOF.
func (tt responseCase) run(t *testing.T, deprecateEOF bool) {
	t.Run(tt.name, func(t *testing.T) {
		r := NewResponse(tt.shape, tt.cursor)
		if deprecateEOF {
			r = r.DeprecateEOF()
		}
		kinds, end, r, err := walkResponse(r, tt.pkts...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(kinds, tt.want) || end != tt.end || r.Status != tt.status {
			t.Errorf("kinds %v end %d status %#x; want %v end %d status %#x", kinds, end, r.Status, tt.want, tt.end, tt.status)
		}
	})
}

// walk feeds payloads to a Response of shape and returns the kinds, the
// index of the packet the response ended with (-1: not ended) and the
// error that stopped it.
func walk(shape Shape, cursor bool, pkts ...[]byte) ([]Kind, int, *Response, error) {
	return walkResponse(NewResponse(shape, cursor), pkts...)
}

// walkResponse is walk on a Response made already.
func walkResponse(r *Response, pkts ...[]byte) ([]Kind, int, *Response, error) {
	var kinds []Kind
	for i, p := range pkts {
		k, err := r.Next(p[:min(len(p), PrefixLen)], len(p))
		if err != nil {
			return kinds, -1, r, err
		}
		kinds = append(kinds, k)
		if r.Done() {
			return kinds, i, r, nil
		}
	}
	return kinds, -1, r, nil
}

func TestResponseShapes(t *testing.T) {
	K := func(k ...Kind) []Kind { return k }
	tests := []responseCase{
		{"OK", ShapeResults, false, [][]byte{okDone}, K(KindOK), 0, StatusAutocommit},
		{"ERR", ShapeResults, false, [][]byte{errPkt}, K(KindErr), 0, 0},
		{"result set", ShapeResults, false, [][]byte{colCount, colDef, colDef, eofDone, row, row, eofDone, okDone},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindRow, KindRow, KindEnd), 6, StatusAutocommit},
		{"empty result set", ShapeResults, false, [][]byte{colCount, colDef, colDef, eofDone, eofDone},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindEnd), 4, StatusAutocommit},
		{"error after rows", ShapeResults, false, [][]byte{colCount, colDef, colDef, eofDone, row, errPkt},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindRow, KindErr), 5, StatusAutocommit},
		{"multiple results", ShapeResults, false, [][]byte{okMore, colCount, colDef, colDef, eofDone, row, eofMore, okDone},
			K(KindOK, KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindRow, KindEnd, KindOK), 7, StatusAutocommit},
		{"LOCAL INFILE then OK", ShapeResults, false, [][]byte{infile, okDone}, K(KindLocalInfile, KindOK), 1, StatusAutocommit},
		{"cursor opened", ShapeResults, true, [][]byte{colCount, colDef, colDef, eofCurs, row},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEOF), 3, StatusAutocommit | StatusCursorExists},
		{"cursor asked, none opened", ShapeResults, true, [][]byte{colCount, colDef, colDef, eofDone, row, eofDone},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindRow, KindEnd), 5, StatusAutocommit},
		{"prepare", ShapePrepare, false, [][]byte{prepOK, colDef, eofDone, colDef, colDef, eofDone, okDone},
			K(KindPrepareOK, KindParamDef, KindEOF, KindColumnDef, KindColumnDef, KindEOF), 5, StatusAutocommit},
		{"prepare, nothing to define", ShapePrepare, false, [][]byte{{OKHeader, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
			K(KindPrepareOK), 0, 0},
		{"prepare refused", ShapePrepare, false, [][]byte{errPkt}, K(KindErr), 0, 0},
		{"fetch", ShapeRows, false, [][]byte{row, row, eofDone}, K(KindRow, KindRow, KindEnd), 2, StatusAutocommit},
		{"fetch error", ShapeRows, false, [][]byte{row, errPkt}, K(KindRow, KindErr), 1, 0},
		{"field list", ShapeFields, false, [][]byte{colDef, colDef, eofDone}, K(KindColumnDef, KindColumnDef, KindEnd), 2, StatusAutocommit},
		{"field list error", ShapeFields, false, [][]byte{errPkt}, K(KindErr), 0, 0},
		{"single OK", ShapeSingle, false, [][]byte{okDone}, K(KindOK), 0, StatusAutocommit},
		{"single string", ShapeSingle, false, [][]byte{[]byte("Uptime: 5")}, K(KindOther), 0, 0},
	}
	for _, tt := range tests {
		tt.run(t, false)
	}
	if r := NewResponse(ShapeNone, false); !r.Done() {
		t.Error("a command without an answer is not done at once")
	}
	_, _, r, _ := walk(ShapePrepare, false, prepOK)
	if r.Prepared != (PrepareOK{ID: 7, Columns: 2, Params: 1}) {
		t.Errorf("prepared %+v", r.Prepared)
	}
}

// TestResponseDeprecateEOF: under CLIENT_DEPRECATE_EOF no EOF closes
// definitions, an OK with a 0xFE header ends rows (a row of 16 MiB or more
// starting with 0xFE is still a row), and a cursor's definitions end with
// that OK.
func TestResponseDeprecateEOF(t *testing.T) {
	K := func(k ...Kind) []Kind { return k }
	end := append([]byte{EOFHeader}, AppendOK(nil, 0, StatusAutocommit, 0, "", false)[1:]...)
	endMore := append([]byte{EOFHeader}, AppendOK(nil, 0, StatusAutocommit|StatusMoreResults, 0, "", false)[1:]...)
	endCursor := append([]byte{EOFHeader}, AppendOK(nil, 0, StatusAutocommit|StatusCursorExists, 0, "", false)[1:]...)
	tests := []responseCase{
		{"result set", ShapeResults, false, [][]byte{colCount, colDef, colDef, row, end},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindRow, KindEnd), 4, StatusAutocommit},
		{"empty result set, more results", ShapeResults, false, [][]byte{colCount, colDef, colDef, endMore, okDone},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEnd, KindOK), 4, StatusAutocommit},
		{"cursor", ShapeResults, true, [][]byte{colCount, colDef, colDef, endCursor},
			K(KindColumnCount, KindColumnDef, KindColumnDef, KindEnd), 3, StatusAutocommit | StatusCursorExists},
		{"prepare", ShapePrepare, false, [][]byte{prepOK, colDef, colDef, colDef, okDone},
			K(KindPrepareOK, KindParamDef, KindColumnDef, KindColumnDef), 3, 0},
		{"fetch", ShapeRows, false, [][]byte{row, end}, K(KindRow, KindEnd), 1, StatusAutocommit},
		{"field list", ShapeFields, false, [][]byte{colDef, end}, K(KindColumnDef, KindEnd), 1, StatusAutocommit},
	}
	for _, tt := range tests {
		tt.run(t, true)
	}
	// A row whose first value is 16 MiB or more starts with 0xFE too.
	r := NewResponse(ShapeResults, false).DeprecateEOF()
	for _, p := range [][]byte{colCount, colDef, colDef} {
		_, _ = r.Next(p, len(p))
	}
	if k, err := r.Next([]byte{EOFHeader, 0, 0, 0, 1}, MaxPayload); err != nil || k != KindRow {
		t.Errorf("a continued row: %v %v", k, err)
	}
}

func TestResponseMalformed(t *testing.T) {
	tests := []struct {
		name  string
		shape Shape
		pkts  [][]byte
	}{
		{"zero columns", ShapeResults, [][]byte{{0xFD, 0, 0, 0}}},
		{"truncated column count", ShapeResults, [][]byte{{0xFC, 1}}},
		{"truncated OK", ShapeResults, [][]byte{{OKHeader, 0xFC}}},
		{"definitions not closed", ShapeResults, [][]byte{colCount, colDef, colDef, row}},
		{"short EOF after rows", ShapeResults, [][]byte{colCount, colDef, colDef, eofDone, {EOFHeader, 0}}},
		{"short PREPARE_OK", ShapePrepare, [][]byte{{OKHeader, 1, 0}}},
		{"parameters not closed", ShapePrepare, [][]byte{prepOK, colDef, colDef}},
		{"after the end", ShapeSingle, [][]byte{okDone, okDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewResponse(tt.shape, false)
			var err error
			for _, p := range tt.pkts {
				if _, err = r.Next(p, len(p)); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
	// A column count in a continued packet is no column count.
	if _, err := NewResponse(ShapeResults, false).Next(colCount, MaxPayload); !errors.Is(err, ErrMalformed) {
		t.Errorf("continued column count: %v", err)
	}
}

// FuzzResponse feeds arbitrary packets to a Response of every shape: it
// never panics, and once done it refuses more packets.
func FuzzResponse(f *testing.F) {
	f.Add(byte(ShapeResults), false, append(append(colCount, 0), colDef...))
	f.Add(byte(ShapePrepare), false, prepOK)
	f.Add(byte(ShapeResults), true, eofCurs)
	f.Fuzz(func(t *testing.T, shape byte, cursor bool, data []byte) {
		r := NewResponse(Shape(shape%6), cursor)
		// Each packet is the next 1–24 bytes, its length given by the byte before it.
		for len(data) > 0 && !r.Done() {
			n := 1 + int(data[0])%24
			p := data[1:min(len(data), 1+n)]
			data = data[min(len(data), 1+n):]
			if _, err := r.Next(p, len(p)); err != nil {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("error %v is not ErrMalformed", err)
				}
				return
			}
		}
		if r.Done() {
			if _, err := r.Next(okDone, len(okDone)); err == nil {
				t.Fatal("a done response took another packet")
			}
		}
	})
}

// errorFor is a server error of code.
func errorFor(code uint16) *mysql.MyError {
	return &mysql.MyError{Code: code, State: "42S02", Message: "Table 'app.t' doesn't exist"}
}

// TestResponseMariaDBExtensions: under MariaDB's progress reports, packets
// with error code 0xFFFF before an answer do not end it; under metadata
// caching a column count carries a byte saying whether definitions follow.
func TestResponseMariaDBExtensions(t *testing.T) {
	progress := []byte{ErrHeader, 0xFF, 0xFF, 1, 1, 0, 0, 0, 2, 'x'}
	r := NewResponse(ShapeResults, false).Progress()
	for i, want := range []Kind{KindProgress, KindProgress, KindOK} {
		p := [][]byte{progress, progress, okDone}[i]
		if k, err := r.Next(p, len(p)); err != nil || k != want {
			t.Fatalf("packet %d: %v %v, want %v", i, k, err, want)
		}
	}
	if !r.Done() {
		t.Error("not done after the OK")
	}
	if k, _ := NewResponse(ShapeResults, false).Next(progress, len(progress)); k != KindErr {
		t.Errorf("without progress reports negotiated: %v, want an error", k)
	}
	// REPAIR TABLE reports progress between its definitions and its rows.
	r = NewResponse(ShapeResults, false).Progress()
	var kinds []Kind
	for _, p := range [][]byte{colCount, colDef, colDef, eofDone, progress, row, eofDone} {
		k, err := r.Next(p, len(p))
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, k)
	}
	if want := []Kind{KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindProgress, KindRow, KindEnd}; !slices.Equal(kinds, want) || !r.Done() {
		t.Errorf("progress among rows: %v, want %v", kinds, want)
	}
	withMeta, withoutMeta := append(AppendLenEnc(nil, 2), 1), append(AppendLenEnc(nil, 2), 0)
	for _, tc := range []struct {
		name  string
		noEOF bool
		pkts  [][]byte
		want  []Kind
	}{
		{"definitions follow", false, [][]byte{withMeta, colDef, colDef, eofDone, row, eofDone},
			[]Kind{KindColumnCount, KindColumnDef, KindColumnDef, KindEOF, KindRow, KindEnd}},
		{"definitions skipped", false, [][]byte{withoutMeta, eofDone, row, eofDone},
			[]Kind{KindColumnCount, KindEOF, KindRow, KindEnd}},
		{"definitions skipped, no EOF", true, [][]byte{withoutMeta, row, append([]byte{EOFHeader}, okDone[1:]...)},
			[]Kind{KindColumnCount, KindRow, KindEnd}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewResponse(ShapeResults, false).CacheMetadata()
			if tc.noEOF {
				r.DeprecateEOF()
			}
			var kinds []Kind
			for _, p := range tc.pkts {
				k, err := r.Next(p, len(p))
				if err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, k)
			}
			if !slices.Equal(kinds, tc.want) || !r.Done() {
				t.Errorf("kinds %v (done %v), want %v", kinds, r.Done(), tc.want)
			}
		})
	}
	if _, err := NewResponse(ShapeResults, false).CacheMetadata().Next(AppendLenEnc(nil, 2), 1); !errors.Is(err, ErrMalformed) {
		t.Errorf("a column count without its metadata flag: %v", err)
	}
}
