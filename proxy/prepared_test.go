package proxy

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// bulkPayload is a COM_STMT_BULK_EXECUTE payload for statement id with the
// given flags, types (when flags ask for them) and rows.
func bulkPayload(id uint32, flags uint16, types, rows []byte) []byte {
	p := binary.LittleEndian.AppendUint32([]byte{wire.ComStmtBulkExecute}, id)
	p = binary.LittleEndian.AppendUint16(p, flags)
	return append(append(p, types...), rows...)
}

// TestBulkTypes: a bulk execution's statement id is translated; the types
// it carries are recorded; a statement prepared again upstream gets the
// types last sent added (flag set) when the client leaves them out, and a
// replay copy always carries them.
func TestBulkTypes(t *testing.T) {
	types := []byte{0x03, 0, 0xFD, 0} // INT, VARCHAR
	rows := []byte{0, 1, 0, 0, 0, 0, 1, 'a', 1, 0}
	t.Run("types sent are recorded, id translated", func(t *testing.T) {
		ps := &preparedStmt{upstreamID: 9, params: 2, needTypes: true}
		got := ps.fixBulk(bulkPayload(4, wire.BulkSendTypes, types, rows))
		if want := bulkPayload(9, wire.BulkSendTypes, types, rows); !bytes.Equal(got, want) {
			t.Fatalf("sent % x, want % x", got, want)
		}
		if !bytes.Equal(ps.types, types) || ps.needTypes {
			t.Fatalf("types % x needTypes %v", ps.types, ps.needTypes)
		}
		if r := ps.withBulkTypes(got); !bytes.Equal(r, got) {
			t.Fatalf("replay copy % x", r)
		}
	})
	t.Run("prepared again: the last types added", func(t *testing.T) {
		ps := &preparedStmt{upstreamID: 9, params: 2, needTypes: true, types: types}
		got := ps.fixBulk(bulkPayload(4, 0, nil, rows))
		if want := bulkPayload(9, wire.BulkSendTypes, types, rows); !bytes.Equal(got, want) {
			t.Fatalf("sent % x, want % x", got, want)
		}
		if ps.needTypes {
			t.Fatal("still needs types")
		}
	})
	t.Run("same statement, no types: untouched, replay copy gets them", func(t *testing.T) {
		ps := &preparedStmt{upstreamID: 4, params: 2, types: types}
		in := bulkPayload(4, wire.BulkSendUnitResults, nil, rows)
		got := ps.fixBulk(bytes.Clone(in))
		if !bytes.Equal(got, in) {
			t.Fatalf("sent % x, want % x", got, in)
		}
		want := bulkPayload(4, wire.BulkSendUnitResults|wire.BulkSendTypes, types, rows)
		if r := ps.withBulkTypes(got); !bytes.Equal(r, want) {
			t.Fatalf("replay copy % x, want % x", r, want)
		}
	})
	t.Run("types unknown: not replayable", func(t *testing.T) {
		ps := &preparedStmt{upstreamID: 4, params: 2}
		if r := ps.withBulkTypes(bulkPayload(4, 0, nil, rows)); r != nil {
			t.Fatalf("replay copy % x, want none", r)
		}
	})
	t.Run("no parameters, short packets", func(t *testing.T) {
		ps := &preparedStmt{upstreamID: 7}
		if got := ps.fixBulk(bulkPayload(4, 0, nil, nil)); binary.LittleEndian.Uint32(got[1:]) != 7 {
			t.Fatalf("sent % x", got)
		}
		ps = &preparedStmt{upstreamID: 7, params: 2, types: types, needTypes: true}
		for _, p := range [][]byte{{wire.ComStmtBulkExecute, 4, 0}, bulkPayload(4, wire.BulkSendTypes, types[:1], nil)} {
			_ = ps.fixBulk(bytes.Clone(p)) // no panic
			_ = ps.withBulkTypes(p)
		}
	})
}
