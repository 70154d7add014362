package rewrite

import "github.com/sqlfork/sqlfork-proxy/rewrite/kind"

// Kind names a statement more finely than its Class, in upper case, as
// its leading words read (kind.Kind).
type Kind = kind.Kind

// The kinds the proxy reads a statement as and acts on (kind's constants).
const (
	KindAlterDatabase           = kind.AlterDatabase
	KindAlterEvent              = kind.AlterEvent
	KindAlterFunction           = kind.AlterFunction
	KindAlterProcedure          = kind.AlterProcedure
	KindAlterSequence           = kind.AlterSequence
	KindAlterTable              = kind.AlterTable
	KindAlterView               = kind.AlterView
	KindAnalyzeTable            = kind.AnalyzeTable
	KindBackupStage             = kind.BackupStage
	KindBegin                   = kind.Begin
	KindCall                    = kind.Call
	KindChangeMaster            = kind.ChangeMaster
	KindCheckTable              = kind.CheckTable
	KindChecksumTable           = kind.ChecksumTable
	KindCommit                  = kind.Commit
	KindCompound                = kind.Compound
	KindCreateDatabase          = kind.CreateDatabase
	KindCreateOrReplaceDatabase = kind.CreateOrReplaceDatabase
	KindCreateFunction          = kind.CreateFunction
	KindCreateIndex             = kind.CreateIndex
	KindCreateProcedure         = kind.CreateProcedure
	KindCreateSequence          = kind.CreateSequence
	KindCreateTable             = kind.CreateTable
	KindCreateTrigger           = kind.CreateTrigger
	KindCreateView              = kind.CreateView
	KindDelete                  = kind.Delete
	KindDo                      = kind.Do
	KindDropDatabase            = kind.DropDatabase
	KindDropFunction            = kind.DropFunction
	KindDropIndex               = kind.DropIndex
	KindDropProcedure           = kind.DropProcedure
	KindDropSequence            = kind.DropSequence
	KindDropTable               = kind.DropTable
	KindDropTrigger             = kind.DropTrigger
	KindDropView                = kind.DropView
	KindExecuteImmediate        = kind.ExecuteImmediate
	KindFlushStatus             = kind.FlushStatus
	KindExplain                 = kind.Explain
	KindFlushTables             = kind.FlushTables
	KindGetDiagnostics          = kind.GetDiagnostics
	KindHandlerClose            = kind.HandlerClose
	KindHandlerOpen             = kind.HandlerOpen
	KindHandlerRead             = kind.HandlerRead
	KindHelp                    = kind.Help
	KindInsert                  = kind.Insert
	KindKill                    = kind.Kill
	KindLoadData                = kind.LoadData
	KindLockTables              = kind.LockTables
	KindOptimizeTable           = kind.OptimizeTable
	KindRenameTable             = kind.RenameTable
	KindRepairTable             = kind.RepairTable
	KindReplace                 = kind.Replace
	KindRollback                = kind.Rollback
	KindRollbackToSavepoint     = kind.RollbackToSavepoint
	KindSelect                  = kind.Select
	KindSet                     = kind.Set
	KindSetGlobal               = kind.SetGlobal
	KindShow                    = kind.Show
	KindShowBinlogEvents        = kind.ShowBinlogEvents
	KindShowColumns             = kind.ShowColumns
	KindShowCount               = kind.ShowCount
	KindShowCreateDatabase      = kind.ShowCreateDatabase
	KindShowCreateFunction      = kind.ShowCreateFunction
	KindShowCreateProcedure     = kind.ShowCreateProcedure
	KindShowCreateTable         = kind.ShowCreateTable
	KindShowCreateTrigger       = kind.ShowCreateTrigger
	KindShowCreateView          = kind.ShowCreateView
	KindShowErrors              = kind.ShowErrors
	KindShowIndex               = kind.ShowIndex
	KindShowOpenTables          = kind.ShowOpenTables
	KindShowProcesslist         = kind.ShowProcesslist
	KindShowRelaylogEvents      = kind.ShowRelaylogEvents
	KindShowStatus              = kind.ShowStatus
	KindShowVariables           = kind.ShowVariables
	KindShowWarnings            = kind.ShowWarnings
	KindSyntaxError             = kind.SyntaxError
	KindTruncateTable           = kind.TruncateTable
	KindUnlockTables            = kind.UnlockTables
	KindUpdate                  = kind.Update
	KindUse                     = kind.Use
	KindXa                      = kind.Xa
)

// Class is the kind of a statement (kind.Class).
type Class = kind.Class

// Statement classes.
const (
	ClassUnparseable = kind.ClassUnparseable
	ClassRead        = kind.ClassRead
	ClassWrite       = kind.ClassWrite
	ClassDDL         = kind.ClassDDL
	ClassTransaction = kind.ClassTransaction
	ClassSession     = kind.ClassSession
	ClassRoutine     = kind.ClassRoutine
	ClassSandbox     = kind.ClassSandbox
	ClassOther       = kind.ClassOther
)
