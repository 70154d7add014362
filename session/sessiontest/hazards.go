package sessiontest

import "fmt"

// AddHazardObjects gives production the objects the catalog's and the
// session's tests read as ones a sandbox cannot hold: a stored function
// app.price, a loadable function myudf, views calling them (MariaDB shows
// a stored function call qualified; an unqualified one is read too) or
// reading other views, information_schema, performance_schema or a
// sequence, a view whose definition is hidden, one whose definition does
// not parse, and a chain of views twelve deep (app.deep0 … app.deep11
// over the table app.deep12).
func (u *Upstream) AddHazardObjects() {
	u.AddFunction("app", "price")
	u.AddUDF("myudf")
	u.AddView("app", "vf", "select `app`.`price`(`app`.`t`.`a`) AS `p` from `app`.`t`")
	u.AddView("app", "vf2", "select price(`app`.`t`.`a`) AS `p` from `app`.`t`")
	u.AddView("app", "vu", "select myudf(1) AS `x`")
	u.AddView("app", "vv", "select `app`.`vf`.`p` AS `p` from `app`.`vf`")
	u.AddView("app", "vi", "select `information_schema`.`TABLES`.`TABLE_NAME` AS `n` from `information_schema`.`TABLES`")
	u.AddView("app", "vp", "select 1 AS `x` from `performance_schema`.`threads`")
	u.AddView("app", "vs", "select nextval(`app`.`seq`) AS `n`")
	u.AddView("app", "vhidden", "")
	u.AddView("app", "vbad", "select `x` from `app`.`t` where `x` = (delete from")
	for i := range 12 {
		u.AddView("app", fmt.Sprintf("deep%d", i), fmt.Sprintf("select `x` AS `x` from `app`.`deep%d`", i+1))
	}
	u.AddTable(Table{DB: "app", Name: "deep12"})
}
