// Package pgcopy is the data format of PostgreSQL's COPY: the options
// (ParseOptions checks them with PostgreSQL's errors), a Decoder that
// turns the bytes of COPY FROM STDIN into rows of field values, and an
// Encoder that turns rows into the bytes of COPY TO STDOUT, in text, CSV
// and binary format. It knows nothing of tables, transactions or the wire
// protocol: sql/copy.go runs COPY with it, the server carries the bytes.
//
// Line numbers: the Decoder counts rows as PostgreSQL counts "lines" in
// its CONTEXT (COPY t, line 3, column x: "..."): the header is line 1 when
// there is one, and a CSV row whose quoted field spans several physical
// lines is one line.
//
// Debugging: Decoder.Line and Decoder.LineText give where a row came from;
// the tests (pgcopy_test.go) are tables of input bytes and the rows or the
// error they give.
package pgcopy

import (
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
)

// Format is COPY's FORMAT.
type Format uint8

const (
	Text Format = iota
	CSV
	Binary
)

func (f Format) String() string {
	switch f {
	case CSV:
		return "csv"
	case Binary:
		return "binary"
	}
	return "text"
}

// Options are COPY's options, checked and with their defaults filled in.
type Options struct {
	Format    Format
	Delimiter byte
	Null      string
	Header    bool
	// HeaderMatch is HEADER MATCH (COPY FROM): the header's names must be
	// the columns'.
	HeaderMatch bool
	Quote       byte
	Escape      byte
	// ForceQuote, ForceNotNull and ForceNull have one entry per column
	// of the COPY.
	ForceQuote   []bool
	ForceNotNull []bool
	ForceNull    []bool
	// Freeze is FREEZE: allowed, as in PostgreSQL, only for a table
	// created or truncated in the current subtransaction (the session
	// checks); it changes nothing about the rows here.
	Freeze bool
}

// ParseOptions checks COPY's options for a COPY FROM (from) or TO of the
// columns cols, as PostgreSQL's ProcessCopyOptions does, and fills in the
// defaults: text format with tab and \N, CSV with comma, "" and '"'.
func ParseOptions(opts []parser.CopyOption, from bool, cols []string) (*Options, error) {
	o := &Options{}
	seen := map[string]bool{}
	var delim, null, quote, escape *string
	var forceQuote, forceNotNull, forceNull *parser.CopyOption
	conflict := func(opt parser.CopyOption) error {
		return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "conflicting or redundant options", Position: opt.Pos}
	}
	for k := range opts {
		opt := opts[k]
		if seen[opt.Name] {
			return nil, conflict(opt)
		}
		seen[opt.Name] = true
		needValue := func() error {
			if !opt.HasValue {
				return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: opt.Name + " requires a parameter", Position: opt.Pos}
			}
			return nil
		}
		force := opt.Name == "force_quote" || opt.Name == "force_not_null" || opt.Name == "force_null"
		if force != (opt.List != nil || opt.Star) || opt.Star && opt.Name != "force_quote" {
			what := "a list of column names"
			if !force {
				what = "a single value"
			}
			return nil, &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Position: opt.Pos,
				Message: "argument to option \"" + opt.Name + "\" must be " + what}
		}
		switch opt.Name {
		case "format":
			if err := needValue(); err != nil {
				return nil, err
			}
			switch opt.Value {
			case "text":
				o.Format = Text
			case "csv":
				o.Format = CSV
			case "binary":
				o.Format = Binary
			default:
				return nil, &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Message: "COPY format \"" + opt.Value + "\" not recognized", Position: opt.Pos}
			}
		case "header":
			if !opt.HasValue {
				o.Header = true
				break
			}
			switch strings.ToLower(opt.Value) {
			case "true", "on", "1", "t", "yes", "y":
				o.Header = true
			case "false", "off", "0", "f", "no", "n":
			case "match":
				if !from {
					return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Message: "cannot use \"match\" with HEADER in COPY TO", Position: opt.Pos}
				}
				o.Header, o.HeaderMatch = true, true
			default:
				return nil, &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "header requires a Boolean value or \"match\"", Position: opt.Pos}
			}
		case "delimiter":
			if err := needValue(); err != nil {
				return nil, err
			}
			delim = &opts[k].Value
		case "null":
			if err := needValue(); err != nil {
				return nil, err
			}
			null = &opts[k].Value
		case "quote":
			if err := needValue(); err != nil {
				return nil, err
			}
			quote = &opts[k].Value
		case "escape":
			if err := needValue(); err != nil {
				return nil, err
			}
			escape = &opts[k].Value
		case "force_quote":
			forceQuote = &opts[k]
		case "force_not_null":
			forceNotNull = &opts[k]
		case "force_null":
			forceNull = &opts[k]
		case "encoding":
			if err := needValue(); err != nil {
				return nil, err
			}
			switch strings.ToUpper(strings.NewReplacer("-", "", "_", "").Replace(opt.Value)) {
			case "UTF8", "UNICODE":
			case "SQLASCII", "LATIN1", "LATIN2", "LATIN9", "WIN1252", "WIN1251", "EUCJP", "SJIS", "GBK", "BIG5",
				"ISO88591", "ISO885915", "KOI8R", "EUCKR", "WIN1250", "UHC", "GB18030":
				return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Position: opt.Pos,
					Message: "COPY with ENCODING '" + opt.Value + "' is not supported yet: PivotDB stores and exchanges UTF8 only"}
			default:
				return nil, &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Position: opt.Pos,
					Message: "argument to option \"encoding\" must be a valid encoding name"}
			}
		case "freeze":
			switch {
			case !opt.HasValue:
				o.Freeze = true
			case isFalse(opt.Value):
			case slices.Contains([]string{"true", "on", "1", "t", "yes", "y"}, strings.ToLower(opt.Value)):
				o.Freeze = true
			default:
				return nil, &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "freeze requires a Boolean value", Position: opt.Pos}
			}
			if o.Freeze && !from {
				// As PostgreSQL 16 and later say it (15 ignored it).
				return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Message: "COPY FREEZE cannot be used with COPY TO", Position: opt.Pos}
			}
		case "oids":
			if opt.HasValue && isFalse(opt.Value) {
				break
			}
			return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Position: opt.Pos, Message: "COPY ... WITH OIDS is not supported"}
		case "default":
			return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported, Position: opt.Pos, Message: "COPY's DEFAULT option is not supported yet"}
		default:
			return nil, &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "option \"" + opt.Name + "\" not recognized", Position: opt.Pos}
		}
	}

	// The checks of PostgreSQL's ProcessCopyOptions, in its order.
	if o.Format == Binary && delim != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot specify DELIMITER in BINARY mode")
	}
	if o.Format == Binary && null != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot specify NULL in BINARY mode")
	}
	if o.Format == Binary && o.Header {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode")
	}
	o.Delimiter = '\t'
	o.Null = `\N`
	if o.Format == CSV {
		o.Delimiter = ','
		o.Null = ""
		o.Quote, o.Escape = '"', 0
	}
	if delim != nil {
		if len(*delim) != 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		o.Delimiter = (*delim)[0]
	}
	if null != nil {
		o.Null = *null
	}
	if o.Format != Binary {
		if o.Delimiter == '\n' || o.Delimiter == '\r' {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
		}
		if strings.ContainsAny(o.Null, "\r\n") {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
		}
		if o.Format == Text && strings.IndexByte(`\.abcdefghijklmnopqrstuvwxyz0123456789`, o.Delimiter) >= 0 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter cannot be \"%c\"", o.Delimiter)
		}
	}
	if o.Format != CSV && quote != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY quote available only in CSV mode")
	}
	if quote != nil {
		if len(*quote) != 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY quote must be a single one-byte character")
		}
		o.Quote = (*quote)[0]
	}
	if o.Format == CSV && o.Delimiter == o.Quote {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different")
	}
	if o.Format != CSV && escape != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY escape available only in CSV mode")
	}
	if escape != nil {
		if len(*escape) != 1 {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY escape must be a single one-byte character")
		}
		o.Escape = (*escape)[0]
	}
	if o.Format == CSV && o.Escape == 0 {
		o.Escape = o.Quote
	}
	var err error
	if forceQuote != nil {
		if o.Format != CSV {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force quote available only in CSV mode")
		}
		if from {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force quote only available using COPY TO")
		}
		if o.ForceQuote, err = columnFlags(forceQuote, "FORCE_QUOTE", cols); err != nil {
			return nil, err
		}
	}
	if forceNotNull != nil {
		if o.Format != CSV {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force not null available only in CSV mode")
		}
		if !from {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force not null only available using COPY FROM")
		}
		if o.ForceNotNull, err = columnFlags(forceNotNull, "FORCE_NOT_NULL", cols); err != nil {
			return nil, err
		}
	}
	if forceNull != nil {
		if o.Format != CSV {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force null available only in CSV mode")
		}
		if !from {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY force null only available using COPY FROM")
		}
		if o.ForceNull, err = columnFlags(forceNull, "FORCE_NULL", cols); err != nil {
			return nil, err
		}
	}
	if o.Format != Binary && strings.IndexByte(o.Null, o.Delimiter) >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter must not appear in the NULL specification")
	}
	if o.Format == CSV && strings.IndexByte(o.Null, o.Quote) >= 0 {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "CSV quote character must not appear in the NULL specification")
	}
	return o, nil
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "off", "0", "f", "no", "n":
		return true
	}
	return false
}

// columnFlags marks the columns a FORCE_* option names (every column for
// FORCE_QUOTE *).
func columnFlags(opt *parser.CopyOption, what string, cols []string) ([]bool, error) {
	flags := make([]bool, len(cols))
	if opt.Star {
		for i := range flags {
			flags[i] = true
		}
		return flags, nil
	}
	for _, name := range opt.List {
		found := false
		for i, c := range cols {
			if strings.EqualFold(c, name) {
				flags[i], found = true, true
				break
			}
		}
		if !found {
			return nil, sqlerr.New(sqlerr.InvalidColumnReference, "%s column \"%s\" not referenced by COPY", what, name)
		}
	}
	return flags, nil
}
