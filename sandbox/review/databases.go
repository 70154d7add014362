package review

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The databases a sandbox made or dropped (registry/databases.go) as a
// review shows them: DIFF has a row for each ("database created", "database
// dropped", "database recreated": production's dropped and made again),
// EXPORT and PROMOTE start with their DROP DATABASE and CREATE DATABASE
// (its character set and collation as the sandbox's schema has them),
// before any table's DDL. Dropping a database drops whatever production
// holds in it, also what it made since, which no check can tell: PROMOTE
// does it only with STRATEGY OURS.

// dbDiff is one database the sandbox made or dropped.
type dbDiff struct {
	name   string
	change string
	// drop and create are its statements ("" for none), the drop first.
	drop, create string
	// prodHas: production has a database of its name now.
	prodHas bool
}

// databases reads the sandbox's own databases, by name.
func (d *differ) databases(ctx context.Context) ([]dbDiff, error) {
	var out []dbDiff
	for _, own := range d.sb.OwnDBs() {
		dd := dbDiff{name: own.Name, change: "database " + string(own.Kind)}
		rows, err := d.c.Query(ctx, "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA "+
			"WHERE SCHEMA_NAME = "+quote.String(own.Name)+" OR SCHEMA_NAME = "+quote.String(own.Phys))
		if err != nil {
			return nil, fmt.Errorf("read database %s: %w", quote.Ident(own.Name), err)
		}
		var create string
		for _, r := range rows {
			switch sideconn.Str(r[0]) {
			case own.Phys:
				create = "CREATE DATABASE " + quote.Ident(own.Name) + " CHARACTER SET " + quote.Ident(sideconn.Str(r[1])) +
					" COLLATE " + quote.Ident(sideconn.Str(r[2]))
			case own.Name:
				dd.prodHas = true
			}
		}
		if own.Kind != sandbox.DBCreated {
			dd.drop = "DROP DATABASE IF EXISTS " + quote.Ident(own.Name)
		}
		if own.Kind != sandbox.DBDropped {
			dd.create = create
		}
		out = append(out, dd)
	}
	return out, nil
}

// databaseDDL are the statements of dbs, drops first.
func databaseDDL(dbs []dbDiff) []string {
	var drops, creates []string
	for _, dd := range dbs {
		if dd.drop != "" {
			drops = append(drops, dd.drop)
		}
		if dd.create != "" {
			creates = append(creates, dd.create)
		}
	}
	return append(drops, creates...)
}

// databaseRows are DIFF's rows of dbs: SUMMARY's one per database, or its
// DDL.
func databaseRows(dbs []dbDiff, summary bool) [][]*string {
	var rows [][]*string
	for _, dd := range dbs {
		name := reply.Str(dd.name)
		if summary {
			rows = append(rows, []*string{name, reply.Str(dd.change), reply.Int(0), reply.Int(0), reply.Int(0), reply.Int(0),
				nil, reply.Str("database"), nil})
			continue
		}
		ddl := dd.drop
		if dd.drop != "" && dd.create != "" {
			ddl += ";\n"
		}
		ddl += dd.create
		rows = append(rows, []*string{name, reply.Str("ddl"), nil, nil, reply.Str(ddl), nil})
	}
	return rows
}

// checkDatabases refuses what a promote of dbs cannot check: a database
// dropped (all production holds in it goes), or made where production now
// has one of its name, unless STRATEGY OURS.
func (p *promotion) checkDatabases() error {
	if p.strategy == "OURS" {
		return nil
	}
	for _, dd := range p.dbs {
		switch {
		case dd.change != "database created" && dd.prodHas:
			return rewrite.Refuse(wire.ErUnknown, "the sandbox dropped the database %s, and what production holds in it (also what it "+
				"made since the fork) would go; STRATEGY OURS drops it anyway", quote.Ident(dd.name))
		case dd.change == "database created" && dd.prodHas:
			return rewrite.Refuse(wire.ErUnknown, "the sandbox created the database %s, and production has one of that name now; "+
				"STRATEGY OURS drops production's and makes the sandbox's", quote.Ident(dd.name))
		}
	}
	return nil
}

// databaseNeeds are the privileges the promote of dbs needs: CREATE, DROP
// on each database.
func databaseNeeds(dbs []dbDiff, add func(priv string, t rewrite.Table, cols ...string)) {
	for _, dd := range dbs {
		if dd.drop != "" {
			add("DROP", rewrite.Table{DB: dd.name})
		}
		if dd.create != "" {
			add("CREATE", rewrite.Table{DB: dd.name})
		}
	}
}

// selectedDBs are the databases of dbs a promote applies: all without FOR;
// with FOR, those made that hold a table it names.
func (p *promotion) selectedDBs(dbs []dbDiff) []dbDiff {
	if len(p.opts.Tables) == 0 {
		return dbs
	}
	var out []dbDiff
	for _, dd := range dbs {
		k := p.m.names.Norm(rewrite.Table{DB: dd.name}).DB
		for _, t := range p.opts.Tables {
			if dd.change != "database dropped" && p.m.names.Norm(t).DB == k {
				out = append(out, dd)
				break
			}
		}
	}
	return out
}

// rebaseDatabases forgets, once a promote committed them, the databases it
// made or dropped: production has them as the sandbox does, and the
// sandbox's tables in them are its own entries, rebased with the rest.
func (p *promotion) rebaseDatabases(ctx context.Context) {
	for _, dd := range p.dbs {
		k := p.m.names.Norm(rewrite.Table{DB: dd.name}).DB
		own, ok := p.sb.OwnDB(k)
		if !ok {
			continue
		}
		own.Kind = ""
		err := p.m.reg.WithConn(ctx, func(c sideconn.Conn) error { return p.m.reg.SaveDB(ctx, c, p.sb, k, own) })
		if err != nil {
			p.m.log.Warn("after a promote, the sandbox's diff still shows a database it promoted", zap.String("sandbox", p.sb.Name),
				zap.String("database", dd.name), zap.Error(err))
		}
	}
}
