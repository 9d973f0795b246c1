package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pivotdb/pivotdb/partition"
	"github.com/pivotdb/pivotdb/sql/bind"
	"github.com/pivotdb/pivotdb/sql/catalog"
	"github.com/pivotdb/pivotdb/sql/parser"
	"github.com/pivotdb/pivotdb/sql/sqlerr"
	"github.com/pivotdb/pivotdb/sql/types"
	"github.com/pivotdb/pivotdb/storage"
)

// Enum types: CREATE TYPE ... AS ENUM, ALTER TYPE and DROP TYPE. A
// column of an enum holds a copy of the type's definition (types/enum.go),
// so ALTER TYPE rewrites the descriptors of the tables that use it in the
// same schema change; stored rows keep sort positions, which ALTER TYPE
// never changes, so no row is rewritten.

// maxEnumLabel is PostgreSQL's NAMEDATALEN-1.
const maxEnumLabel = 63

func (s *Session) runTypeDDL(ctx context.Context, st *bind.TypeDDL) (Result, error) {
	var tag string
	err := s.ddl(func(ch *catalog.Change, _ *partition.Change, _ *storage.Batch) error {
		snap := ch.Snapshot()
		switch st.Kind {
		case parser.TypeCreateEnum:
			tag = "CREATE TYPE"
			return s.createEnum(ch, st.TypeStmt)
		case parser.TypeDrop:
			tag = "DROP TYPE"
			return s.dropEnums(ch, st.TypeStmt)
		}
		tag = "ALTER TYPE"
		e, ok := snap.EnumType(s.db.ID, st.Names[0])
		if !ok {
			return sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", st.Names[0])
		}
		if !s.access(snap).Owns(&e.Owned) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of type %s", e.Def.Name)
		}
		ne := *e
		ne.Def.Labels = slices.Clone(e.Def.Labels)
		switch st.Kind {
		case parser.TypeAddValue:
			label := st.Labels[0]
			if err := checkEnumLabel(label); err != nil {
				return err
			}
			if _, dup := e.Def.Label(label); dup {
				if st.IfNotExists {
					s.notice("NOTICE", sqlerr.DuplicateObject, "enum label %q already exists, skipping", label)
					return nil
				}
				return sqlerr.New(sqlerr.DuplicateObject, "enum label %q already exists", label)
			}
			pos, err := types.NextEnumSort(&e.Def, st.Neighbour, st.Before)
			if err != nil {
				return err
			}
			ne.Def.Labels = append(ne.Def.Labels, types.EnumLabel{Label: label, Sort: pos})
			slices.SortFunc(ne.Def.Labels, func(a, b types.EnumLabel) int {
				switch {
				case a.Sort < b.Sort:
					return -1
				case a.Sort > b.Sort:
					return 1
				}
				return 0
			})
		case parser.TypeRenameValue:
			from, to := st.Labels[0], st.Labels[1]
			k := slices.IndexFunc(ne.Def.Labels, func(l types.EnumLabel) bool { return l.Label == from })
			if k < 0 {
				return sqlerr.New(sqlerr.InvalidParameterValue, "%q is not an existing enum label", from)
			}
			if _, dup := e.Def.Label(to); dup {
				return sqlerr.New(sqlerr.DuplicateObject, "enum label %q already exists", to)
			}
			if err := checkEnumLabel(to); err != nil {
				return err
			}
			ne.Def.Labels[k].Label = to
		case parser.TypeRename:
			if _, dup := snap.EnumType(s.db.ID, st.NewName); dup {
				return sqlerr.New(sqlerr.DuplicateObject, "type %q already exists", st.NewName)
			}
			ne.Def.Name = st.NewName
		}
		ch.PutEnumType(&ne)
		putEnumUsers(ch, s.db.ID, &ne.Def)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &tagResult{tag: tag}, nil
}

// putEnumUsers gives the columns of enum def.ID the new definition.
func putEnumUsers(ch *catalog.Change, dbID uint64, def *types.EnumDef) {
	for t, cols := range ch.Snapshot().EnumUsers(dbID, def.ID) {
		nt := *t
		nt.Columns = slices.Clone(t.Columns)
		for _, i := range cols {
			nt.Columns[i].Type.Enum = def
		}
		ch.PutTable(&nt)
	}
}

func checkEnumLabel(l string) error {
	if len(l) > maxEnumLabel {
		return &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Message: fmt.Sprintf("invalid enum label %q", l),
			Detail: "Labels must be 63 bytes or less."}
	}
	return nil
}

func (s *Session) createEnum(ch *catalog.Change, st *parser.TypeStmt) error {
	name := st.Names[0]
	if _, ok := ch.Snapshot().EnumType(s.db.ID, name); ok || builtinTypeName(name) {
		return sqlerr.New(sqlerr.DuplicateObject, "type %q already exists", name)
	}
	e := &catalog.EnumType{DatabaseID: s.db.ID, Def: types.EnumDef{ID: ch.NewID(), Name: name},
		Owned: catalog.Owned{Owner: s.user}}
	for i, l := range st.Labels {
		if err := checkEnumLabel(l); err != nil {
			return err
		}
		if _, dup := e.Def.Label(l); dup {
			return sqlerr.New(sqlerr.UniqueViolation, "enum label %q used more than once", l)
		}
		e.Def.Labels = append(e.Def.Labels, types.EnumLabel{Label: l, Sort: float64(i + 1)})
	}
	ch.PutEnumType(e)
	return nil
}

// builtinTypeName reports whether name is a type the parser knows.
func builtinTypeName(name string) bool {
	t, err := types.ParseTypeName(name)
	return err == nil && !t.IsUserTypeRef()
}

func (s *Session) dropEnums(ch *catalog.Change, st *parser.TypeStmt) error {
	for _, name := range st.Names {
		snap := ch.Snapshot()
		e, ok := snap.EnumType(s.db.ID, name)
		if !ok {
			if st.IfExists {
				s.notice("NOTICE", sqlerr.UndefinedObject, "type %q does not exist, skipping", name)
				continue
			}
			return sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", name)
		}
		if !s.access(snap).Owns(&e.Owned) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of type %s", e.Def.Name)
		}
		var deps []string
		for t, cols := range snap.EnumUsers(s.db.ID, e.Def.ID) {
			for _, i := range cols {
				deps = append(deps, fmt.Sprintf("column %s of table %s depends on type %s", t.Columns[i].Name, t.Name, e.Def.Name))
			}
		}
		if len(deps) > 0 {
			slices.Sort(deps)
			if st.Cascade {
				return sqlerr.NotSupported("DROP TYPE ... CASCADE of a type that columns use (%s)", deps[0])
			}
			return &sqlerr.Error{Code: sqlerr.DependentObjectsStillExist,
				Message: fmt.Sprintf("cannot drop type %s because other objects depend on it", e.Def.Name),
				Detail:  strings.Join(deps, "\n"),
				Hint:    "Use DROP ... CASCADE to drop the dependent objects too."}
		}
		ch.DropEnumType(e)
	}
	return nil
}
