package parser

// Script is a parsed SQL script: its statements in order.
type Script struct{ Stmts []Stmt }

// Stmt is one statement of a script.
type Stmt interface{ At() Pos }

// Set is SET 'key' = 'value'.
type Set struct {
	P          Pos
	Key, Value string
}

// CreateTable is CREATE TABLE name (columns, WATERMARK …) WITH (options).
type CreateTable struct {
	P         Pos
	Name      string
	Columns   []Column
	Watermark *Watermark
	With      []Option
}

// Column is a physical column (Type set) or a computed one (Computed set).
type Column struct {
	P        Pos
	Name     string
	Type     *Type
	Computed Expr
}

// Type is a SQL type: BIGINT, VARCHAR(10), DECIMAL(23, 3), ROW<a INT, …>.
type Type struct {
	P      Pos
	Name   string // upper case
	Args   []int
	Fields []Column // ROW
}

// Watermark is WATERMARK FOR column AS expression.
type Watermark struct {
	P      Pos
	Column string
	Expr   Expr
}

// Option is one 'key' = 'value' of a WITH clause.
type Option struct {
	P          Pos
	Key, Value string
}

// CreateView is CREATE [TEMPORARY] VIEW name AS query.
type CreateView struct {
	P         Pos
	Name      string
	Temporary bool
	Query     *Select
}

// Insert is INSERT INTO table query.
type Insert struct {
	P     Pos
	Table string
	Query *Select
}

// StatementSet is EXECUTE STATEMENT SET BEGIN insert; … END.
type StatementSet struct {
	P       Pos
	Inserts []*Insert
}

func (s *Set) At() Pos          { return s.P }
func (s *CreateTable) At() Pos  { return s.P }
func (s *CreateView) At() Pos   { return s.P }
func (s *Insert) At() Pos       { return s.P }
func (s *StatementSet) At() Pos { return s.P }

// Select is SELECT items FROM from [WHERE] [GROUP BY] [HAVING].
type Select struct {
	P       Pos
	Items   []SelectItem
	From    TableRef
	Where   Expr
	GroupBy []Expr
	Having  Expr
}

// SelectItem is one projected expression (or *).
type SelectItem struct {
	P     Pos
	Expr  Expr // nil for * and t.*
	Alias string
	// Of is t of t.* (the columns of the input called t).
	Of string
}

// TableRef is what a query reads.
type TableRef interface{ At() Pos }

// TableName reads a table or view.
type TableName struct {
	P     Pos
	Name  string
	Alias string
}

// WindowTVF is TABLE(TUMBLE|HOP|SESSION(TABLE t [PARTITION BY …], DESCRIPTOR(col), intervals…)).
type WindowTVF struct {
	P     Pos
	Kind  string // TUMBLE, HOP, SESSION
	Input TableRef
	// Partition: SESSION(TABLE t PARTITION BY cols, …).
	Partition  []string
	PartitionP []Pos
	Descriptor string
	DescP      Pos
	Args       []Expr
	Alias      string
}

// SubQuery is (SELECT …) [AS] alias in FROM.
type SubQuery struct {
	P     Pos
	Query *Select
	Alias string
}

// Join is Left [INNER] JOIN Right ON On. Kind is INNER, LEFT, RIGHT or
// FULL (the planner says which it plans); Left is itself a Join in a
// join of three or more inputs.
type Join struct {
	P           Pos // the JOIN keyword (or the INNER/LEFT/… before it)
	Kind        string
	Left, Right TableRef
	On          Expr
}

func (t *TableName) At() Pos { return t.P }
func (t *WindowTVF) At() Pos { return t.P }
func (t *SubQuery) At() Pos  { return t.P }
func (t *Join) At() Pos      { return t.P }

// Expr is an expression.
type Expr interface{ At() Pos }

// Ident is a column reference: a, t.a or a.b (a ROW member).
type Ident struct {
	P     Pos
	Parts []string
}

// Literal is a number, string, TRUE/FALSE or NULL.
type Literal struct {
	P    Pos
	Kind string // number, string, bool, null
	Text string
}

// Interval is INTERVAL 'n' UNIT.
type Interval struct {
	P     Pos
	Value string
	Unit  string // SECOND, MINUTE, HOUR, DAY, MILLISECOND (upper case, singular)
}

// Binary is L op R; Op is upper case for AND/OR.
type Binary struct {
	P    Pos
	Op   string
	L, R Expr
}

// Unary is -X or NOT X.
type Unary struct {
	P  Pos
	Op string
	X  Expr
}

// Call is a function call; Star for COUNT(*).
type Call struct {
	P        Pos
	Name     string // upper case
	Args     []Expr
	Star     bool
	Distinct bool
}

// Case is CASE [operand] WHEN … THEN … [ELSE …] END.
type Case struct {
	P       Pos
	Operand Expr
	Whens   []When
	Else    Expr
}

// When is one WHEN cond THEN result.
type When struct{ Cond, Result Expr }

// Cast is CAST(x AS type).
type Cast struct {
	P    Pos
	X    Expr
	Type *Type
}

// In is X [NOT] IN (list).
type In struct {
	P    Pos
	X    Expr
	List []Expr
	Not  bool
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	P         Pos
	X, Lo, Hi Expr
	Not       bool
}

// Like is X [NOT] LIKE pattern.
type Like struct {
	P       Pos
	X       Expr
	Pattern Expr
	Not     bool
}

// IsNull is X IS [NOT] NULL.
type IsNull struct {
	P   Pos
	X   Expr
	Not bool
}

func (e *Ident) At() Pos    { return e.P }
func (e *Literal) At() Pos  { return e.P }
func (e *Interval) At() Pos { return e.P }
func (e *Binary) At() Pos   { return e.P }
func (e *Unary) At() Pos    { return e.P }
func (e *Call) At() Pos     { return e.P }
func (e *Case) At() Pos     { return e.P }
func (e *Cast) At() Pos     { return e.P }
func (e *In) At() Pos       { return e.P }
func (e *Between) At() Pos  { return e.P }
func (e *Like) At() Pos     { return e.P }
func (e *IsNull) At() Pos   { return e.P }
