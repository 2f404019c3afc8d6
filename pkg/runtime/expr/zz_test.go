package expr
import ("testing";"github.com/flinkgo/flinkgo/pkg/runtime")
func BenchmarkZZKey(b *testing.B){
  p,_:=Compile("windowEnd", Any)
  r:=&runtime.Record{Value: []byte(`{"key":"1000","windowStart":1767225590000,"windowEnd":1767225600000,"num":3}`)}
  var dst []byte
  for i:=0;i<b.N;i++{ dst,_=p.AppendValue(dst[:0], r) }
}
