package wire

// Capability flags (CLIENT_… in the protocol documentation).
const (
	CapLongPassword     uint32 = 0x00000001
	CapFoundRows        uint32 = 0x00000002
	CapLongFlag         uint32 = 0x00000004
	CapConnectWithDB    uint32 = 0x00000008
	CapNoSchema         uint32 = 0x00000010
	CapCompress         uint32 = 0x00000020
	CapODBC             uint32 = 0x00000040
	CapLocalFiles       uint32 = 0x00000080
	CapIgnoreSpace      uint32 = 0x00000100
	CapProtocol41       uint32 = 0x00000200
	CapInteractive      uint32 = 0x00000400
	CapSSL              uint32 = 0x00000800
	CapIgnoreSigpipe    uint32 = 0x00001000
	CapTransactions     uint32 = 0x00002000
	CapSecureConnection uint32 = 0x00008000
	CapMultiStatements  uint32 = 0x00010000
	CapMultiResults     uint32 = 0x00020000
	CapPSMultiResults   uint32 = 0x00040000
	CapPluginAuth       uint32 = 0x00080000
	CapConnectAttrs     uint32 = 0x00100000
	CapPluginAuthLenenc uint32 = 0x00200000
	CapSessionTrack     uint32 = 0x00800000
	CapDeprecateEOF     uint32 = 0x01000000
	CapZstdCompression  uint32 = 0x04000000 // CLIENT_ZSTD_COMPRESSION_ALGORITHM (MySQL 8.0.18)
)

// MariaDB's extended capability flags (MARIADB_CLIENT_… >> 32): in the 4
// last reserved bytes of the greeting and the handshake response, read only
// when CLIENT_MYSQL (CapLongPassword) is not set — the peer is MariaDB.
const (
	ExtCapProgress         uint32 = 1 << 0 // progress reports during long statements
	ExtCapComMulti         uint32 = 1 << 1 // COM_MULTI (gone since 10.6)
	ExtCapBulkOperations   uint32 = 1 << 2 // COM_STMT_BULK_EXECUTE
	ExtCapExtendedMetadata uint32 = 1 << 3 // extended type information in column definitions
	ExtCapCacheMetadata    uint32 = 1 << 4 // result sets may skip metadata a client has
)

// Server status flags (SERVER_STATUS_… and friends), carried by OK and EOF
// packets.
const (
	StatusInTrans             uint16 = 0x0001
	StatusAutocommit          uint16 = 0x0002
	StatusMoreResults         uint16 = 0x0008
	StatusCursorExists        uint16 = 0x0040
	StatusNoBackslashEscapes  uint16 = 0x0200
	StatusSessionStateChanged uint16 = 0x4000 // session state information follows the OK packet's info
)

// CursorFlagsMask selects the cursor type in COM_STMT_EXECUTE's flags
// byte: any bit set asks for a cursor.
const CursorFlagsMask = 0x0F
