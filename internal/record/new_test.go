package record

import "testing"

// New makes the payload of every known kind, answering that kind, and refuses an unknown one.
func TestNewMakesEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		p, ok := New(k)
		if !ok || p == nil || p.Kind() != k {
			t.Errorf("New(%s) = %v, %v", k, p, ok)
		}
	}
	if p, ok := New("no_such_kind"); ok || p != nil {
		t.Errorf("New of an unknown kind = %v, %v", p, ok)
	}
}
