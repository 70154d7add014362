package forking

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

func TestShapeChange(t *testing.T) {
	id := forker.Column{Name: "id", Type: "int(11)", Auto: true}
	s := forker.Column{Name: "s", Type: "varchar(20)", Nullable: true}
	base := forker.Shape{Key: []string{"id"}, Columns: []forker.Column{id, s}}
	wide := s
	wide.Type = "varchar(40)"
	notNull := s
	notNull.Nullable = false
	for _, c := range []struct {
		name string
		prod forker.Shape
		want bool
	}{
		{"same", base, false},
		{"widened", forker.Shape{Key: []string{"id"}, Columns: []forker.Column{id, wide}}, true},
		{"not null", forker.Shape{Key: []string{"id"}, Columns: []forker.Column{id, notNull}}, true},
		{"dropped", forker.Shape{Key: []string{"id"}, Columns: []forker.Column{id}}, true},
		{"added", forker.Shape{Key: []string{"id"}, Columns: []forker.Column{id, s, {Name: "x", Type: "int(11)"}}}, false},
		{"key", forker.Shape{Key: []string{"s"}, Columns: []forker.Column{id, s}}, true},
		{"reordered", forker.Shape{Key: []string{"id"}, Columns: []forker.Column{s, id}}, false},
	} {
		if got := shapeChange(base, c.prod); (got != "") != c.want {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}
