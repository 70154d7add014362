package kind

import "github.com/pingcap/tidb/pkg/parser/ast"

// Of names a statement node for callers that act on its kind.
func Of(s ast.StmtNode) Kind {
	switch x := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return Select
	case *ast.ShowStmt:
		return showKind(x)
	case *ast.ExplainStmt:
		return Explain
	case *ast.HelpStmt:
		return Help
	case *ast.InsertStmt:
		if x.IsReplace {
			return Replace
		}
		return Insert
	case *ast.UpdateStmt:
		return Update
	case *ast.DeleteStmt:
		return Delete
	case *ast.LoadDataStmt:
		return LoadData
	case *ast.BeginStmt:
		return Begin
	case *ast.CommitStmt:
		return Commit
	case *ast.RollbackStmt:
		if x.SavepointName != "" {
			return RollbackToSavepoint
		}
		return Rollback
	case *ast.SetStmt:
		for _, v := range x.Variables {
			if v.IsGlobal || v.IsInstance {
				return SetGlobal
			}
		}
		return Set
	case *ast.UseStmt:
		return Use
	case *ast.LockTablesStmt:
		return LockTables
	case *ast.UnlockTablesStmt:
		return UnlockTables
	case *ast.KillStmt:
		return Kill
	case *ast.DoStmt:
		return Do
	case *ast.CallStmt:
		return Call
	}
	return ddlKind(s)
}

// showKinds are the Kinds of the SHOW statements named apart from the
// rest (Show).
var showKinds = map[ast.ShowStmtType]Kind{
	ast.ShowOpenTables:      ShowOpenTables,
	ast.ShowProcessList:     ShowProcesslist,
	ast.ShowCreateView:      ShowCreateView,
	ast.ShowCreateDatabase:  ShowCreateDatabase,
	ast.ShowCreateProcedure: ShowCreateProcedure,
	ast.ShowStatus:          ShowStatus,
	ast.ShowVariables:       ShowVariables,
	ast.ShowCreateTable:     ShowCreateTable,
	ast.ShowColumns:         ShowColumns,
	ast.ShowIndex:           ShowIndex,
}

// showKind is the Kind of a SHOW statement.
func showKind(x *ast.ShowStmt) Kind {
	switch {
	case x.Tp == ast.ShowWarnings && !x.CountWarningsOrErrors:
		return ShowWarnings
	case x.Tp == ast.ShowErrors && !x.CountWarningsOrErrors:
		return ShowErrors
	case x.Tp == ast.ShowWarnings || x.Tp == ast.ShowErrors:
		return ShowCount
	}
	if k, ok := showKinds[x.Tp]; ok {
		return k
	}
	return Show
}

// ddlKind is the Kind of a statement that defines or drops a schema
// object, "" for any other.
func ddlKind(s ast.StmtNode) Kind {
	switch x := s.(type) {
	case *ast.CreateTableStmt:
		return CreateTable
	case *ast.AlterTableStmt:
		return AlterTable
	case *ast.DropTableStmt:
		if x.IsView {
			return DropView
		}
		return DropTable
	case *ast.RenameTableStmt:
		return RenameTable
	case *ast.TruncateTableStmt:
		return TruncateTable
	case *ast.CreateIndexStmt:
		return CreateIndex
	case *ast.DropIndexStmt:
		return DropIndex
	case *ast.CreateViewStmt:
		return CreateView
	case *ast.CreateDatabaseStmt:
		return CreateDatabase
	case *ast.DropDatabaseStmt:
		return DropDatabase
	case *ast.AlterDatabaseStmt:
		return AlterDatabase
	case *ast.CreateSequenceStmt:
		return CreateSequence
	case *ast.DropSequenceStmt:
		return DropSequence
	case *ast.AlterSequenceStmt:
		return AlterSequence
	case *ast.DropProcedureStmt:
		return DropProcedure
	case *ast.ProcedureInfo:
		return CreateProcedure
	}
	return ""
}

// ClassOf maps a statement node to its class.
func ClassOf(s ast.StmtNode) Class {
	switch x := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.ShowStmt, *ast.HelpStmt:
		// HELP reads the server's help tables (mysql.help_*) only.
		return ClassRead
	case *ast.ExplainStmt:
		if x.Analyze {
			return ClassOf(x.Stmt)
		}
		return ClassRead
	case *ast.InsertStmt, *ast.UpdateStmt, *ast.DeleteStmt, *ast.LoadDataStmt:
		return ClassWrite
	case *ast.CreateTableStmt, *ast.AlterTableStmt, *ast.DropTableStmt, *ast.RenameTableStmt,
		*ast.TruncateTableStmt, *ast.CreateIndexStmt, *ast.DropIndexStmt, *ast.CreateViewStmt,
		*ast.CreateDatabaseStmt, *ast.DropDatabaseStmt, *ast.AlterDatabaseStmt, *ast.CreateSequenceStmt,
		*ast.DropSequenceStmt, *ast.AlterSequenceStmt:
		return ClassDDL
	case *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		return ClassTransaction
	case *ast.SetStmt, *ast.UseStmt, *ast.PrepareStmt, *ast.ExecuteStmt, *ast.DeallocateStmt,
		*ast.LockTablesStmt, *ast.UnlockTablesStmt, *ast.SetRoleStmt:
		return ClassSession
	case *ast.CallStmt, *ast.ProcedureInfo, *ast.DropProcedureStmt:
		return ClassRoutine
	}
	return ClassOther
}
