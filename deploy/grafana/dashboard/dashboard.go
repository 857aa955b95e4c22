// Package dashboard builds the Grafana dashboard of dealer-edge,
// deploy/grafana/dealer-edge.json (go generate ./... in deploy/ writes
// it; a test checks the committed file is up to date and that every
// metric its queries name is one the edge exports).
//
// It is plain Go structs of the Grafana dashboard JSON model (schema
// version 39), not github.com/grafana/grafana-foundation-sdk: the
// dashboard uses a handful of panel fields, and the SDK's generated
// builders would add a pre-1.0 dependency whose API changes with every
// Grafana release for no check the test does not already make.
package dashboard

//go:generate go run ../gen -o ../dealer-edge.json

import (
	"bytes"
	"encoding/json"
)

// Dashboard is the top level of the Grafana dashboard JSON model.
type Dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	Description   string      `json:"description"`
	Tags          []string    `json:"tags"`
	Timezone      string      `json:"timezone"`
	SchemaVersion int         `json:"schemaVersion"`
	Version       int         `json:"version"`
	Editable      bool        `json:"editable"`
	GraphTooltip  int         `json:"graphTooltip"`
	Refresh       string      `json:"refresh"`
	Time          TimeRange   `json:"time"`
	Templating    List[Var]   `json:"templating"`
	Annotations   List[Annot] `json:"annotations"`
	Links         []Link      `json:"links"`
	Panels        []Panel     `json:"panels"`
}

// List wraps a list as Grafana nests it ({"list": [...]}).
type List[T any] struct {
	List []T `json:"list"`
}

// TimeRange is the default time range.
type TimeRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Datasource refers to a data source by type and uid.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Var is a template variable.
type Var struct {
	Name       string      `json:"name"`
	Label      string      `json:"label,omitempty"`
	Type       string      `json:"type"`
	Query      any         `json:"query"`
	Datasource *Datasource `json:"datasource,omitempty"`
	Refresh    int         `json:"refresh,omitempty"`
	Multi      bool        `json:"multi"`
	IncludeAll bool        `json:"includeAll"`
	AllValue   string      `json:"allValue,omitempty"`
	Current    any         `json:"current,omitempty"`
	Sort       int         `json:"sort,omitempty"`
}

// Annot is an annotation query.
type Annot struct {
	Name       string      `json:"name"`
	Datasource *Datasource `json:"datasource"`
	Enable     bool        `json:"enable"`
	Hide       bool        `json:"hide"`
	IconColor  string      `json:"iconColor"`
	BuiltIn    int         `json:"builtIn,omitempty"`
	Type       string      `json:"type,omitempty"`
	Expr       string      `json:"expr,omitempty"`
	Step       string      `json:"step,omitempty"`
	TitleFmt   string      `json:"titleFormat,omitempty"`
	TextFormat string      `json:"textFormat,omitempty"`
	TagKeys    string      `json:"tagKeys,omitempty"`
}

// Link is a dashboard link.
type Link struct {
	Title       string `json:"title"`
	Type        string `json:"type"`
	URL         string `json:"url"`
	TargetBlank bool   `json:"targetBlank"`
}

// GridPos places a panel on the 24-column grid.
type GridPos struct {
	H int `json:"h"`
	W int `json:"w"`
	X int `json:"x"`
	Y int `json:"y"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string      `json:"refId"`
	Datasource   *Datasource `json:"datasource"`
	Expr         string      `json:"expr"`
	LegendFormat string      `json:"legendFormat,omitempty"`
	Instant      bool        `json:"instant,omitempty"`
	Range        bool        `json:"range"`
	Format       string      `json:"format,omitempty"`
}

// Panel is a row or a visualisation.
type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description,omitempty"`
	GridPos     GridPos     `json:"gridPos"`
	Collapsed   *bool       `json:"collapsed,omitempty"`
	Datasource  *Datasource `json:"datasource,omitempty"`
	Targets     []Target    `json:"targets,omitempty"`
	FieldConfig *FieldConf  `json:"fieldConfig,omitempty"`
	Options     any         `json:"options,omitempty"`
	Transforms  []any       `json:"transformations,omitempty"`
	Panels      []Panel     `json:"panels,omitempty"`
}

// FieldConf is a panel's field configuration.
type FieldConf struct {
	Defaults  FieldDefaults `json:"defaults"`
	Overrides []any         `json:"overrides"`
}

// FieldDefaults are the default field options.
type FieldDefaults struct {
	Unit       string         `json:"unit,omitempty"`
	Min        *float64       `json:"min,omitempty"`
	Max        *float64       `json:"max,omitempty"`
	Decimals   *int           `json:"decimals,omitempty"`
	Custom     map[string]any `json:"custom,omitempty"`
	Mappings   []any          `json:"mappings,omitempty"`
	Thresholds *Thresholds    `json:"thresholds,omitempty"`
	Color      map[string]any `json:"color,omitempty"`
}

// Thresholds colour values by steps.
type Thresholds struct {
	Mode  string `json:"mode"`
	Steps []Step `json:"steps"`
}

// Step is one threshold step; Value nil is the base.
type Step struct {
	Color string   `json:"color"`
	Value *float64 `json:"value"`
}

// JSON returns the dashboard as indented JSON with a trailing newline,
// the bytes of deploy/grafana/dealer-edge.json.
func JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(Build()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
