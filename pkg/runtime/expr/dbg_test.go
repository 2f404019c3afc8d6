package expr
import "testing"
func TestDbgNativeOK(t *testing.T) {
	recs := nexmarkEvents(t, 4096)
	p, _ := Compile(`event_type == 2`, Bool)
	fails, general := 0, 0
	for _, r := range recs {
		if !p.nat.scan(r.Value, &p.nc) { fails++ }
		set := &p.nc.shapes[0]
		_ = set
	}
	sink := &keysSink{want: []string{"event_type"}}
	set := &shapeSet{}
	for _, r := range recs { scanAll(r.Value, set, sink) }
	general = sink.lookups
	t.Log("fails", fails, "lookups", general, set.used)
}
