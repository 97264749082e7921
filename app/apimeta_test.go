package app

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/internal/tsgen"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// rangedInputs are the admin API's inputs whose number fields carry range
// tags, under the name of their ranges in the frontend.
var rangedInputs = map[string]reflect.Type{
	"BreakerParamsRanges": reflect.TypeFor[breaker.Overrides](),
	"EndpointPatchRanges": reflect.TypeFor[store.EndpointPatch](),
	"EndpointKeyRanges":   reflect.TypeFor[store.EndpointKey](),
	"SettingsRanges":      reflect.TypeFor[Settings](),
}

// frontendMetadata declares what the UI's forms offer and check, from
// the Go lists and range tags rather than copies of them: the closed sets
// in the order the UI offers them, the numeric breaker parameters in
// field order, and each input's ranges (what config.CheckRanges enforces).
func frontendMetadata(g *tsgen.Generator) error {
	g.Const("Protocols", stringsOf(proxy.Protocols))
	g.Const("AuthModes", stringsOf(proxy.AuthModes))
	g.Const("Strategies", stringsOf(proxy.Strategies))
	g.Const("CaptureModes", stringsOf(proxy.CaptureModes))
	g.Const("MismatchModes", stringsOf(proxy.MismatchModes))
	var params []string
	overrides := reflect.TypeFor[breaker.Overrides]()
	for f := range overrides.Fields() {
		if f.Type.Elem().Kind() != reflect.Bool {
			params = append(params, jsonName(f))
		}
	}
	g.Const("BreakerNumberFields", params)
	for name, t := range rangedInputs {
		ranges := map[string][2]float64{}
		for f := range t.Fields() {
			r, ok, err := config.RangeOf(f)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if config.IsFloat(f.Type) {
				ranges[jsonName(f)] = [2]float64{r.FMin, r.FMax}
			} else {
				ranges[jsonName(f)] = [2]float64{float64(r.Min), float64(r.Max)}
			}
		}
		g.Const(name, ranges)
	}
	return nil
}

// jsonName is f's JSON member name.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// TestFrontendMetadata (items 1 and 3): the generated file carries the Go
// lists the forms offer, in their order, the range of every number field
// with a range tag, and the attempt's words as the types of their
// constants, so the UI copies none of them.
func TestFrontendMetadata(t *testing.T) {
	out, err := frontendTypes()
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	list := func(vs []string) string {
		b, err := json.Marshal(vs)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), `","`, `", "`)
	}
	union := func(vs ...string) string { return `"` + strings.Join(vs, `" | "`) + `"` }
	var want []string
	for name, vs := range map[string][]string{
		"Protocols":     stringsOf(proxy.Protocols),
		"AuthModes":     stringsOf(proxy.AuthModes),
		"Strategies":    stringsOf(proxy.Strategies),
		"CaptureModes":  stringsOf(proxy.CaptureModes),
		"MismatchModes": stringsOf(proxy.MismatchModes),
	} {
		want = append(want, "export const "+name+" = "+list(vs)+" as const;")
	}
	var params []string
	for f := range reflect.TypeFor[breaker.Overrides]().Fields() {
		if f.Type.Elem().Kind() != reflect.Bool {
			params = append(params, jsonName(f))
		}
	}
	want = append(want, "export const BreakerNumberFields = "+list(params)+" as const;")
	for name, typ := range rangedInputs {
		block := "export const " + name + " = {\n"
		for f := range typ.Fields() {
			if r, ok, _ := config.RangeOf(f); ok {
				lo, hi := fmt.Sprint(r.Min), fmt.Sprint(r.Max)
				if config.IsFloat(f.Type) {
					lo, hi = fmt.Sprint(r.FMin), fmt.Sprint(r.FMax)
				}
				want = append(want, block+"[^}]*\n  "+jsonName(f)+": ["+lo+", "+hi+"],\n")
			}
		}
	}
	want = append(want,
		"export type HedgePart = "+union(string(proxy.HedgeWon), string(proxy.HedgeCancelled), string(proxy.HedgeFailed))+";",
		"export type Adjustment = "+union(string(proxy.AdjustStripThinking), string(proxy.AdjustStepEffort), string(proxy.AdjustDropEffort),
			string(proxy.AdjustMaxTokens), string(proxy.AdjustDropRefused))+";",
		"export type Translation = "+union(stringsOf(proxy.Translations())...)+";",
		"  hedge?: HedgePart;", "  adjusted?: Adjustment;", "  translation?: Translation;",
		"  translated: Record<string, Translation>;",
	)
	for _, w := range want {
		block, member, isBlock := strings.Cut(w, "[^}]*")
		if !isBlock {
			if !strings.Contains(got, w+"\n") {
				t.Errorf("the generated types lack the line %q", w)
			}
			continue
		}
		i := strings.Index(got, block)
		end := strings.Index(got[max(i, 0):], "} as const;")
		if i < 0 || end < 0 || !strings.Contains(got[i:i+end], member) {
			t.Errorf("the generated types lack %q in %q", strings.TrimSpace(member), strings.TrimSpace(block))
		}
	}
	if n := len(proxy.Translations()); n != len(proxy.Protocols)*(len(proxy.Protocols)-1) {
		t.Errorf("%d translations, want every ordered pair of %d protocols", n, len(proxy.Protocols))
	}
}
