package registry_test

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
)

func TestForgetRoutines(t *testing.T) {
	sb := &registry.Sandbox{}
	p, f := registry.RoutineKey("PROCEDURE", "_sqlfork_ab_app", "P"), registry.RoutineKey("FUNCTION", "_sqlfork_ab_app", "f")
	if p != registry.RoutineKey("PROCEDURE", "_sqlfork_ab_app", "p") {
		t.Errorf("routine keys differ by the name's case: %q", p)
	}
	sb.NoteRoutine(p, true)
	sb.NoteRoutine(f, false)
	sb.ForgetRoutines(false, p)
	if known, _ := sb.RoutineKnown(p); known {
		t.Error("a routine forgotten is still known")
	}
	if known, own := sb.RoutineKnown(f); !known || own {
		t.Errorf("the other routine: known %v, own %v; want known, a copy", known, own)
	}
	sb.ForgetRoutines(true)
	if known, _ := sb.RoutineKnown(f); known {
		t.Error("a routine is known after every one was forgotten")
	}
	sb.NoteRoutine(p, true)
	if known, own := sb.RoutineKnown(p); !known || !own {
		t.Errorf("a routine noted after all were forgotten: known %v, own %v", known, own)
	}
}
