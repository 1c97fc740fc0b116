package scenarios

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// LoadFile reads one scenario file (.yaml, .yml or .json).
func LoadFile(name string) (*Scenario, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readLimited(f)
	if err != nil {
		return nil, err
	}
	return LoadBytes(name, data)
}

// LoadBytes decodes one scenario from data; name's extension picks YAML or
// JSON and name prefixes every error. A file holds exactly one scenario.
// Decoding is strict (unknown fields and wrong types are errors, except
// inside setup) and then the scenario is validated; the error, if any, is
// Errors listing every problem. The scenario is returned even then, as far
// as it decoded, unless the file could not be parsed at all or is over a
// limit (MaxFileSize, MaxNodes, MaxExpandedBytes, MaxDepth, MaxItems,
// MaxKeyLen). It never panics, whatever data holds.
func LoadBytes(name string, data []byte) (*Scenario, error) {
	src, root, err := parseWithin(name, data)
	if err != nil {
		return nil, err
	}
	s := &Scenario{src: src}
	d := &decoder{src: src}
	d.value(root, reflect.ValueOf(s).Elem(), "")
	errs := d.errs
	for _, e := range s.Validate() {
		errs = append(errs, e)
	}
	sortErrors(errs)
	return s, errs.orNil()
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// parse reads the single document of a YAML or JSON file. JSON is first
// checked by encoding/json so that YAML-only syntax (comments, bare words)
// is refused in a .json file.
// parseWithin parses a file of either kind (scenario or catalogue) within
// the size and node limits, as Errors naming the file and line.
func parseWithin(name string, data []byte) (*source, *yaml.Node, error) {
	if len(data) > MaxFileSize {
		line := 1 + bytes.Count(data[:MaxFileSize], []byte("\n"))
		return nil, nil, Errors{&Error{File: name, Line: line,
			Msg: fmt.Sprintf("file is over %d bytes (MaxFileSize)", MaxFileSize)}}
	}
	root, err := parse(name, data)
	if err != nil {
		return nil, nil, Errors{err}
	}
	if err := checkBudget(name, root); err != nil {
		return nil, nil, Errors{err}
	}
	return &source{file: name, lines: map[string]int{}, bad: map[string]bool{}}, root, nil
}

func parse(name string, data []byte) (*yaml.Node, error) {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		// json.Valid checks syntax only, so a number out of float64's
		// range is left to the decoder to report at its line.
		if !json.Valid(data) {
			var v any
			err := json.Unmarshal(data, &v) // for the offset of the mistake
			line := 0
			var se *json.SyntaxError
			if errors.As(err, &se) {
				line = 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
			}
			return nil, &Error{File: name, Line: line, Msg: "invalid JSON: " + err.Error()}
		}
	case ".yaml", ".yml":
	default:
		return nil, &Error{File: name, Msg: "unknown file type (want .yaml, .yml or .json)"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &Error{File: name, Msg: "empty file"}
		}
		line := 0
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			line, _ = strconv.Atoi(m[1])
		}
		return nil, &Error{File: name, Line: line, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		return nil, &Error{File: name, Line: more.Line, Msg: "more than one document (a file holds one scenario)"}
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: name, Msg: "empty file"}
	}
	return doc.Content[0], nil
}

// sortErrors orders errors by file and line, keeping discovery order within
// a line.
func sortErrors(errs Errors) {
	key := func(e error) (string, int) {
		var se *Error
		if errors.As(e, &se) {
			return se.File, se.Line
		}
		return "", 0
	}
	sort.SliceStable(errs, func(i, j int) bool {
		fi, li := key(errs[i])
		fj, lj := key(errs[j])
		if fi != fj {
			return fi < fj
		}
		return li < lj
	})
}

// isScenarioFile reports whether a file name has a scenario extension.
func isScenarioFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// LoadFS loads every scenario file under dir in fsys (recursively, sorted
// by path) as one pack, and checks it as a pack (see ValidatePack). Error
// file names are paths inside fsys.
func LoadFS(fsys fs.FS, dir string) ([]*Scenario, error) {
	return loadFS(fsys, dir, func(p string) string { return p })
}

// LoadDir loads every scenario file under a directory as one pack.
func LoadDir(dir string) ([]*Scenario, error) {
	return loadFS(os.DirFS(dir), ".", func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) })
}

func loadFS(fsys fs.FS, dir string, display func(string) string) ([]*Scenario, error) {
	var files []string
	err := fs.WalkDir(fsys, dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !de.IsDir() && isScenarioFile(p) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Scenario
	var errs Errors
	for _, f := range files {
		data, err := readFile(fsys, f)
		if err != nil {
			return nil, err
		}
		s, err := LoadBytes(display(f), data)
		if err != nil {
			errs = append(errs, err.(Errors)...)
		}
		if s != nil {
			out = append(out, s)
		}
	}
	errs = append(errs, packErrors(out)...)
	if len(files) == 0 {
		errs = append(errs, fmt.Errorf("%s: no scenario files", dir))
	}
	return out, errs.orNil()
}

// ValidatePack validates every scenario and the pack as a whole: ids are
// unique and every scenario has a description.
func ValidatePack(pack []*Scenario) []error {
	var errs Errors
	for _, s := range pack {
		errs = append(errs, s.Validate()...)
	}
	return append(errs, packErrors(pack)...)
}

func packErrors(pack []*Scenario) Errors {
	var errs Errors
	first := map[string]*Scenario{}
	for _, s := range pack {
		if s.Description == "" && !s.src.decodeFailed("description") {
			errs = append(errs, &Error{File: s.File(), Line: s.src.line(""), Field: "description",
				Msg: "required in a pack: one line naming the bug the scenario catches"})
		}
		if s.ID == "" {
			continue
		}
		if f, dup := first[s.ID]; dup {
			errs = append(errs, &Error{File: s.File(), Line: s.src.line("id"), Field: "id",
				Msg: fmt.Sprintf("duplicate scenario id %q (also in %s)", s.ID, f.File())})
			continue
		}
		first[s.ID] = s
	}
	return errs
}

// readFile reads a file of fsys, at most one byte past MaxFileSize.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f)
}
