package sql

import (
	"context"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/storage"
)

// comment is COMMENT ON TABLE|COLUMN|INDEX name IS 'text' | NULL. The
// text lives in the table's catalog descriptor (Table.Comment,
// Column.Comment, Index.Comment, PrimaryKeyComment), so it is versioned,
// transactional and durable like any other change of the table, and
// pg_description, obj_description and col_description read it
// (pgcatalog). As in PostgreSQL only the table's owner may comment, and
// an empty text removes the comment.
func (s *Session) comment(ctx context.Context, p *bind.Comment) (Result, error) {
	parts := p.Parts
	if p.Kind == "column" {
		parts = parts[:len(parts)-1]
	}
	schema, rel := "", parts[len(parts)-1]
	if len(parts) == 2 {
		schema = parts[0]
	}
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		acc := s.access(snap)
		var t *catalog.Table
		ok := false
		if schema == "" || strings.EqualFold(schema, "pg_temp") {
			t, ok = snap.Table(s.db.ID, s.tempPrefix+rel)
		}
		if !ok && !strings.EqualFold(schema, "pg_temp") {
			if schema != "" && !strings.EqualFold(schema, s.db.Name) && !strings.EqualFold(schema, "public") {
				return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", strings.Join(parts, "."))
			}
			t, ok = snap.Table(s.db.ID, rel)
		}
		var ix *catalog.Index
		pkey := false
		if p.Kind == "index" {
			if ok {
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not an index", rel)
			}
			if t, ix, ok = snap.IndexByName(s.db.ID, rel); !ok {
				// The primary key's index is named t_pkey (pgcatalog).
				if base, found := strings.CutSuffix(rel, "_pkey"); found {
					if t, ok = snap.Table(s.db.ID, base); ok && !hasHiddenKey(t) {
						pkey = true
					}
				}
			}
		}
		if !ok {
			_, _, isIndex := snap.IndexByName(s.db.ID, rel)
			switch {
			case p.Kind == "table" && (isIndex || snap.RelationExists(s.db.ID, rel)):
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not a table", rel)
			case p.Kind == "index" && snap.RelationExists(s.db.ID, rel):
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not an index", rel)
			case p.Kind == "column" && isIndex:
				return sqlerr.New(sqlerr.WrongObjectType, "%q is not a table, view, materialized view, composite type, or foreign table", rel)
			case snap.RelationExists(s.db.ID, rel):
				// PostgreSQL also comments a view's columns; PivotDB keeps
				// comments on tables only so far.
				return sqlerr.NotSupported("COMMENT ON COLUMN of a view or a sequence")
			}
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rel)
		}
		if err := ownTable(acc, t); err != nil {
			return err
		}
		nt := *t
		switch {
		case p.Kind == "table":
			nt.Comment = p.Text
		case pkey:
			nt.PrimaryKeyComment = p.Text
		case ix != nil:
			nt.Indexes = slices.Clone(t.Indexes)
			for i := range nt.Indexes {
				if nt.Indexes[i].ID == ix.ID {
					nt.Indexes[i].Comment = p.Text
				}
			}
		default:
			name := p.Parts[len(p.Parts)-1]
			col := -1
			for i, c := range t.Columns {
				if c.Name == name && !c.Hidden {
					col = i
				}
			}
			if col < 0 {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, rel)
			}
			nt.Columns = slices.Clone(t.Columns)
			nt.Columns[col].Comment = p.Text
		}
		ch.PutTable(&nt)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: "COMMENT"}, nil
}

// hasHiddenKey reports whether t was declared without a primary key (its
// key is a hidden column, and it has no t_pkey index).
func hasHiddenKey(t *catalog.Table) bool {
	return len(t.PrimaryKey) == 1 && t.Columns[t.PrimaryKey[0]].Hidden
}
