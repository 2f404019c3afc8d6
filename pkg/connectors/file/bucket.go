package file

import (
	"fmt"
	"path"
	"strings"
	"time"
)

// defaultBucket is Flink's DateTimeBucketAssigner default format.
const defaultBucket = "yyyy-MM-dd--HH"

// bucketer assigns a record to a bucket: a directory below the sink's path
// named by formatting a time (Flink's DateTimeBucketAssigner). The zero
// bucketer (bucket: none) puts every record into the path itself.
//
// The pattern is kept as segments (literal text and Go layout elements),
// so literal text of a Java pattern can never be read as a Go layout
// element. Not safe for concurrent use (it caches the last bucket).
type bucketer struct {
	segs []segment
	loc  *time.Location
	// Kind is "none", "go" or "java": how the pattern was read.
	Kind string
	// Layout is the pattern as one Go layout (for messages; literal text
	// may read differently there).
	Layout string

	subSecond bool
	lastSec   int64
	lastID    string
	buf       []byte
}

type segment struct {
	lit    string // literal text, or
	layout string // a Go layout element
}

// newBucketer reads spec: "none", a Go time layout ("2006-01-02--15") or
// a Java SimpleDateFormat pattern ("yyyy-MM-dd--HH"); which one it is is
// detected (see isJavaPattern). Buckets are formatted in loc.
func newBucketer(spec string, loc *time.Location) (*bucketer, error) {
	if loc == nil {
		loc = time.Local
	}
	b := &bucketer{loc: loc, lastSec: -1 << 62}
	switch {
	case spec == "none":
		b.Kind = "none"
		return b, nil
	case strings.TrimSpace(spec) == "":
		return nil, fmt.Errorf(`is empty; write a pattern such as %q, a Go layout such as "2006-01-02--15", or none`, defaultBucket)
	case isJavaPattern(spec):
		segs, err := translateJava(spec)
		if err != nil {
			return nil, err
		}
		b.segs, b.Kind = segs, "java"
	default:
		b.segs, b.Kind = []segment{{layout: spec}}, "go"
	}
	for _, s := range b.segs {
		b.Layout += s.lit + s.layout
		if strings.Contains(s.layout, ".0") || strings.Contains(s.layout, ".9") ||
			strings.Contains(s.layout, ",0") || strings.Contains(s.layout, ",9") {
			b.subSecond = true
		}
	}
	if err := b.check(spec); err != nil {
		return nil, err
	}
	return b, nil
}

// check rejects patterns that hold no time element or that format to
// something that is not a plain relative directory.
func (b *bucketer) check(spec string) error {
	t1 := time.Date(2001, 2, 3, 4, 5, 6, 7e6, b.loc)
	t2 := time.Date(2012, 11, 22, 17, 48, 39, 876e6, b.loc)
	s1, s2 := b.format(t1), b.format(t2)
	if s1 == s2 {
		return fmt.Errorf("%q contains no date or time element (it always gives %q); write a Go layout such as \"2006-01-02--15\", a Java pattern such as %q, or none", spec, s1, defaultBucket)
	}
	for _, s := range []string{s1, s2} {
		if err := checkRelDir(s); err != nil {
			return fmt.Errorf("%q gives bucket directory %q, which %v", spec, s, err)
		}
	}
	return nil
}

func checkRelDir(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("is empty")
	case strings.HasPrefix(s, "/") || strings.Contains(s, `\`):
		return fmt.Errorf("is not a relative path with / separators")
	case path.Clean(s) != s || s == ".." || strings.HasPrefix(s, "../"):
		return fmt.Errorf("is not a clean path (empty, . or .. components)")
	}
	for _, part := range strings.Split(s, "/") {
		if strings.HasPrefix(part, ".") {
			return fmt.Errorf("has a component starting with '.' (hidden directories are skipped by readers)")
		}
	}
	return nil
}

// ID returns the bucket of a record at ms (Unix milliseconds). It caches
// the last second, so a stream of nearby times formats once per second.
func (b *bucketer) ID(ms int64) string {
	if b.Kind == "none" {
		return ""
	}
	sec := ms / 1000
	if ms < 0 && ms%1000 != 0 {
		sec--
	}
	if !b.subSecond && sec == b.lastSec {
		return b.lastID
	}
	id := b.format(time.UnixMilli(ms))
	b.lastSec, b.lastID = sec, id
	return id
}

func (b *bucketer) format(t time.Time) string {
	t = t.In(b.loc)
	buf := b.buf[:0]
	for _, s := range b.segs {
		if s.layout != "" {
			buf = t.AppendFormat(buf, s.layout)
		} else {
			buf = append(buf, s.lit...)
		}
	}
	b.buf = buf
	return string(buf)
}

// isJavaPattern reports whether spec reads as a Java SimpleDateFormat
// pattern rather than a Go layout: outside quoted text it has pattern
// letters (y M d H h m s), no digit (every Go layout element but the
// month and weekday names has one) and none of Go's named elements.
func isJavaPattern(spec string) bool {
	if strings.Contains(spec, "'") {
		return true
	}
	for _, w := range []string{"Jan", "Mon", "MST", "PM", "pm", "Z07"} {
		if strings.Contains(spec, w) {
			return false
		}
	}
	if strings.ContainsAny(spec, "0123456789") {
		return false
	}
	return strings.ContainsAny(spec, "yMdHhms")
}

// translateJava turns a Java SimpleDateFormat pattern into segments.
func translateJava(p string) ([]segment, error) {
	var segs []segment
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			segs = append(segs, segment{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\'':
			j, text, err := quoted(p, i)
			if err != nil {
				return nil, err
			}
			lit.WriteString(text)
			i = j
		case isASCIILetter(c):
			n := 1
			for i+n < len(p) && p[i+n] == c {
				n++
			}
			if c == 'S' {
				// Go writes a fraction with its separator: ".000".
				s := lit.String()
				if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, ",") {
					return nil, fmt.Errorf("pattern %q: S (fraction of a second) must follow '.' or ','", p)
				}
				lit.Reset()
				lit.WriteString(s[:len(s)-1])
				flush()
				segs = append(segs, segment{layout: s[len(s)-1:] + strings.Repeat("0", min(n, 9))})
				i += n
				continue
			}
			el, err := javaElement(c, n)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %v", p, err)
			}
			flush()
			segs = append(segs, segment{layout: el})
			i += n
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return segs, nil
}

// quoted reads quoted text starting at the quote p[i]; two quotes in a
// row stand for one quote character.
func quoted(p string, i int) (next int, text string, err error) {
	if i+1 < len(p) && p[i+1] == '\'' {
		return i + 2, "'", nil
	}
	var b strings.Builder
	for j := i + 1; j < len(p); j++ {
		if p[j] != '\'' {
			b.WriteByte(p[j])
			continue
		}
		if j+1 < len(p) && p[j+1] == '\'' {
			b.WriteByte('\'')
			j++
			continue
		}
		return j + 1, b.String(), nil
	}
	return 0, "", fmt.Errorf("pattern %q: unterminated quote", p)
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// javaElement maps a run of n pattern letters c to a Go layout element.
func javaElement(c byte, n int) (string, error) {
	pick := func(short, long string) string {
		if n <= 1 {
			return short
		}
		return long
	}
	switch c {
	case 'y', 'u':
		if n == 2 {
			return "06", nil
		}
		return "2006", nil
	case 'M', 'L':
		switch {
		case n == 1:
			return "1", nil
		case n == 2:
			return "01", nil
		case n == 3:
			return "Jan", nil
		}
		return "January", nil
	case 'd':
		return pick("2", "02"), nil
	case 'D':
		if n == 3 {
			return "002", nil
		}
		return "", fmt.Errorf("D (day of year) is supported as DDD only")
	case 'H':
		return "15", nil // Go has no unpadded 24-hour element
	case 'h':
		return pick("3", "03"), nil
	case 'm':
		return pick("4", "04"), nil
	case 's':
		return pick("5", "05"), nil
	case 'E':
		if n >= 4 {
			return "Monday", nil
		}
		return "Mon", nil
	case 'a':
		return "PM", nil
	case 'z':
		return "MST", nil
	case 'Z':
		return "-0700", nil
	case 'X':
		switch n {
		case 1:
			return "Z07", nil
		case 2:
			return "Z0700", nil
		}
		return "Z07:00", nil
	}
	return "", fmt.Errorf("unsupported pattern letter %q; supported: y M d D H h m s S E a z Z X and 'quoted text'", c)
}
