// Package gitops reads LoadTest objects the way the tools that gate
// deployments on them do, with those tools' own code:
//
//   - kstatus status.Compute (sigs.k8s.io/cli-utils), what `kubectl
//     kubeload`, cli-utils appliers and Flux without healthCheckExprs use,
//     and Flux's fork of it (github.com/fluxcd/cli-utils);
//   - Flux's CEL health evaluator (github.com/fluxcd/pkg/runtime/cel) on the
//     healthCheckExprs shipped in examples/flux/kustomization.yaml;
//   - our Argo CD health check (deploy/argocd/.../health.lua) under
//     gopher-lua, called the way Argo CD calls it.
//
// The objects come from the operator's own status code
// (testdata/operator/*.json, golden-checked by the unit tests) and, when
// KUBELOAD_CAPTURED_LOADTESTS names a directory, from a real cluster (the
// operator e2e writes `kubectl get lt -o json` for each state there). Every
// tool must read every state as expected; above all, nothing reads green
// unless the run finished and passed.
package gitops

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	fluxstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/pkg/apis/kustomize"
	fluxcel "github.com/fluxcd/pkg/runtime/cel"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

const (
	repoRoot        = "../.."
	healthLuaPath   = repoRoot + "/deploy/argocd/resource_customizations/kubeload.dev/LoadTest/health.lua"
	argocdCMPath    = repoRoot + "/deploy/argocd/argocd-cm.yaml"
	argocdCMKey     = "resource.customizations.health.kubeload.dev_LoadTest"
	fluxExamplePath = repoRoot + "/examples/flux/kustomization.yaml"
	fixturesDir     = "testdata/operator"
	capturedEnv     = "KUBELOAD_CAPTURED_LOADTESTS"
)

var update = flag.Bool("update", false,
	"rewrite the argocd-cm snippet and the upstream testdata from health.lua and the fixtures")

// outcome is what a gate must conclude from one state.
type outcome string

const (
	progressing outcome = "progressing" // not finished (or not of this generation): wait
	healthy     outcome = "healthy"     // finished and passed: go on
	degraded    outcome = "degraded"    // failed run or missed gate: stop
)

// expected, by state; a fixture or captured object is named <state>.json.
var expected = map[string]outcome{
	"unseen":               progressing, // created; the operator has not written a status yet
	"pending":              progressing,
	"starting":             progressing,
	"running":              progressing,
	"passed":               healthy,
	"no-gate":              healthy,
	"no-baseline":          healthy,  // a test's first run: Baseline=False NoBaseline, Ready=True
	"no-baseline-required": degraded, // the same with baseline.required: a missed gate
	"shared-target":        healthy,  // passed while another run loaded the same pods: TargetShared=True, Ready=True
	"generator-saturated":  healthy,  // passed with a worker at its CPU limit: GeneratorSaturated=True, Ready=True
	"failed-gate":          degraded, // Succeeded, verdict Fail
	"failed-run":           degraded, // Failed: a worker died
	"invalid-spec":         degraded, // Failed: InvalidSpec
	"stale-passed":         progressing,
	// An experiment (spec.variants): Inconclusive is a failed gate, never green.
	"experiment-running":           progressing,
	"experiment-passed":            healthy,
	"experiment-comparison-failed": degraded,
	"experiment-inconclusive":      degraded,
	"experiment-round-failed":      degraded,
	// A capacity search (spec.search): green when it found a passing value,
	// never when even its first step failed or a step could not be measured.
	"search-running":         progressing,
	"search-capacity-found":  healthy,
	"search-ceiling-reached": healthy,
	"search-no-passing-step": degraded,
	"search-step-failed":     degraded,
	"stale-failed-gate":    progressing,
}

// What each tool says, in its own words, for each outcome.
var (
	kstatusFor = map[outcome]status.Status{
		progressing: status.InProgressStatus, healthy: status.CurrentStatus, degraded: status.FailedStatus}
	fluxStatusFor = map[outcome]fluxstatus.Status{
		progressing: fluxstatus.InProgressStatus, healthy: fluxstatus.CurrentStatus, degraded: fluxstatus.FailedStatus}
	argoFor = map[outcome]string{progressing: "Progressing", healthy: "Healthy", degraded: "Degraded"}
)

// ---- the tools -------------------------------------------------------------------

// argoHealth runs a health.lua the way Argo CD's util/lua does for a script
// from argocd-cm: the object as the global `obj`, only the base, table and
// package libraries open (no string library), a table back with status
// and message. withOpenLibs is how Argo CD runs built-in scripts
// (resource_customizations in its repository) and its own tests.
func argoHealth(obj *unstructured.Unstructured, script string, withOpenLibs bool) (string, string, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: !withOpenLibs})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		if err := l.CallByParam(lua.P{Fn: l.NewFunction(lib.open), NRet: 0, Protect: true},
			lua.LString(lib.name)); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", toLua(l, obj.Object))
	if err := l.DoString(script); err != nil {
		return "", "", err
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("health.lua returned %s, not a table", l.Get(-1).Type())
	}
	status, _ := table.RawGetString("status").(lua.LString)
	message, _ := table.RawGetString("message").(lua.LString)
	switch string(status) {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
	default:
		return "", "", fmt.Errorf("health.lua returned an invalid health status %q", status)
	}
	return string(status), string(message), nil
}

// toLua converts an unstructured object as Argo CD does: maps to tables,
// arrays to sequences (1-based), every number (int64 in unstructured) to a
// Lua number.
func toLua(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		table := l.CreateTable(len(v), 0)
		for _, item := range v {
			table.Append(toLua(l, item))
		}
		return table
	case map[string]any:
		table := l.CreateTable(0, len(v))
		for key, item := range v {
			table.RawSetH(lua.LString(key), toLua(l, item))
		}
		return table
	}
	return lua.LNil
}

// fluxLoadTestExprs are the healthCheckExprs for LoadTest in the shipped
// Flux example.
func fluxLoadTestExprs(t *testing.T) *kustomize.HealthCheckExpressions {
	t.Helper()
	data, err := os.ReadFile(fluxExamplePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, document := range strings.Split(string(data), "\n---\n") {
		var kustomization struct {
			Spec struct {
				HealthCheckExprs []kustomize.CustomHealthCheck `json:"healthCheckExprs"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(document), &kustomization); err != nil {
			t.Fatalf("%s: %v", fluxExamplePath, err)
		}
		for _, check := range kustomization.Spec.HealthCheckExprs {
			if check.APIVersion == "kubeload.dev/v1alpha1" && check.Kind == "LoadTest" {
				return &check.HealthCheckExpressions
			}
		}
	}
	t.Fatalf("%s has no healthCheckExprs for kubeload.dev/v1alpha1 LoadTest", fluxExamplePath)
	return nil
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readings evaluates one object with every tool; a tool's error is its reading.
type readings struct {
	kstatus, fluxKstatus, fluxCEL, argo, argoMessage string
}

func readAll(t *testing.T, obj *unstructured.Unstructured) readings {
	t.Helper()
	var r readings
	if result, err := status.Compute(obj); err != nil {
		r.kstatus = "error: " + err.Error()
	} else {
		r.kstatus = result.Status.String()
	}
	if result, err := fluxstatus.Compute(obj); err != nil {
		r.fluxKstatus = "error: " + err.Error()
	} else {
		r.fluxKstatus = result.Status.String()
	}
	evaluator, err := fluxcel.NewStatusEvaluator(fluxLoadTestExprs(t))
	if err != nil {
		t.Fatalf("Flux refuses our healthCheckExprs: %v", err)
	}
	if result, err := evaluator.Evaluate(context.Background(), obj); err != nil {
		r.fluxCEL = "error: " + err.Error()
	} else {
		r.fluxCEL = result.Status.String()
	}
	if health, message, err := argoHealth(obj, readFile(t, healthLuaPath), false); err != nil {
		r.argo = "error: " + err.Error()
	} else {
		r.argo, r.argoMessage = health, message
	}
	return r
}

// ---- objects ---------------------------------------------------------------------

func loadObjects(t *testing.T, dir string) map[string]*unstructured.Unstructured {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]*unstructured.Unstructured{}
	for _, path := range paths {
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON([]byte(readFile(t, path))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objects[strings.TrimSuffix(filepath.Base(path), ".json")] = obj
	}
	return objects
}

func fixture(t *testing.T, state string) *unstructured.Unstructured {
	t.Helper()
	obj := loadObjects(t, fixturesDir)[state]
	if obj == nil {
		t.Fatalf("%s/%s.json is missing (the unit tests write it with KUBELOAD_UPDATE_GOLDEN=1)", fixturesDir, state)
	}
	return obj
}

// checkNoFalseGreen reads every object with every tool and compares with
// the expected outcome of its state, logging the whole table.
func checkNoFalseGreen(t *testing.T, objects map[string]*unstructured.Unstructured) {
	t.Helper()
	states := make([]string, 0, len(objects))
	for state := range objects {
		states = append(states, state)
	}
	sort.Strings(states)
	t.Logf("%-18s %-11s | %-10s %-10s %-10s %-11s | %s", "state", "expected", "kstatus",
		"flux", "flux CEL", "argo", "argo message")
	for _, state := range states {
		want, known := expected[state]
		if !known {
			t.Errorf("%s: no expected outcome for this state (known: %v)", state, keys(expected))
			continue
		}
		r := readAll(t, objects[state])
		t.Logf("%-18s %-11s | %-10s %-10s %-10s %-11s | %s", state, want, r.kstatus, r.fluxKstatus,
			r.fluxCEL, r.argo, r.argoMessage)
		green := r.kstatus == status.CurrentStatus.String() ||
			r.fluxKstatus == fluxstatus.CurrentStatus.String() ||
			r.fluxCEL == fluxstatus.CurrentStatus.String() || r.argo == "Healthy"
		if green && want != healthy {
			t.Errorf("FALSE GREEN: %s (%s) reads %+v", state, want, r)
		}
		for tool, pair := range map[string][2]string{
			"kstatus (sigs.k8s.io/cli-utils)": {r.kstatus, kstatusFor[want].String()},
			"kstatus (fluxcd/cli-utils)":      {r.fluxKstatus, fluxStatusFor[want].String()},
			"Flux CEL healthCheckExprs":       {r.fluxCEL, fluxStatusFor[want].String()},
			"Argo CD health.lua":              {r.argo, argoFor[want]},
		} {
			if pair[0] != pair[1] {
				t.Errorf("%s: %s reads %q, want %q", state, tool, pair[0], pair[1])
			}
		}
		if r.argoMessage == "" {
			t.Errorf("%s: the Argo CD health check gives no message", state)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ---- tests -----------------------------------------------------------------------

func TestOperatorFixturesReadRightInEveryTool(t *testing.T) {
	objects := loadObjects(t, fixturesDir)
	for state := range expected {
		if objects[state] == nil {
			t.Errorf("%s/%s.json is missing (the unit tests write it with KUBELOAD_UPDATE_GOLDEN=1)",
				fixturesDir, state)
		}
	}
	checkNoFalseGreen(t, objects)
}

func TestCapturedObjectsReadRightInEveryTool(t *testing.T) {
	dir := os.Getenv(capturedEnv)
	if dir == "" {
		t.Skipf("%s is not set (the operator e2e sets it to the objects it captured)", capturedEnv)
	}
	objects := loadObjects(t, dir)
	if len(objects) == 0 {
		t.Fatalf("no objects in %s", dir)
	}
	for _, state := range []string{"pending", "running", "passed", "failed-gate", "failed-run"} {
		if objects[state] == nil {
			t.Errorf("the e2e captured no %q object in %s", state, dir)
		}
	}
	checkNoFalseGreen(t, objects)
}

// A LoadTest without any status: what the API server would return if the
// CRD did not default status.observedGeneration to 0. Plain kstatus has no
// way to know such an object is unfinished (no generation to compare, no
// conditions), which is why the CRD sets that default; our own checks must
// still read it as in progress.
func TestObjectWithoutStatusIsNeverGreenInOurChecks(t *testing.T) {
	obj := fixture(t, "unseen").DeepCopy()
	unstructured.RemoveNestedField(obj.Object, "status")
	health, _, err := argoHealth(obj, readFile(t, healthLuaPath), false)
	if err != nil || health != "Progressing" {
		t.Errorf("Argo CD health.lua: %q, %v; want Progressing", health, err)
	}
	evaluator, err := fluxcel.NewStatusEvaluator(fluxLoadTestExprs(t))
	if err != nil {
		t.Fatal(err)
	}
	// Flux cannot evaluate the expressions on an object without status; an
	// error is a failed health check, never a pass.
	if result, err := evaluator.Evaluate(context.Background(), obj); err == nil &&
		result.Status == fluxstatus.CurrentStatus {
		t.Errorf("Flux CEL reads an object without status as Current")
	}
}

func TestCRDDefaultsObservedGenerationToZero(t *testing.T) {
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema struct {
						Properties map[string]struct {
							Default map[string]any `json:"default"`
						} `json:"properties"`
					} `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, repoRoot+"/crds/kubeload.dev_loadtests.yaml")), &crd); err != nil {
		t.Fatal(err)
	}
	for _, version := range crd.Spec.Versions {
		def := version.Schema.OpenAPIV3Schema.Properties["status"].Default
		if fmt.Sprint(def["observedGeneration"]) != "0" {
			t.Errorf("the CRD's status default is %v; want observedGeneration: 0, so that kstatus "+
				"reads a LoadTest the operator has not seen as in progress", def)
		}
	}
	if got := readAll(t, fixture(t, "unseen")).kstatus; got != "InProgress" {
		t.Errorf("kstatus reads the defaulted status as %s", got)
	}
}

// The argocd-cm snippet carries health.lua verbatim.
func TestArgoCDConfigMapCarriesHealthLua(t *testing.T) {
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, argocdCMPath)), &cm); err != nil {
		t.Fatal(err)
	}
	if got, want := cm.Data[argocdCMKey], readFile(t, healthLuaPath); got != want {
		t.Errorf("%s %s differs from %s; regenerate it with `go test -run TestArgoCDConfigMap -update`",
			argocdCMPath, argocdCMKey, healthLuaPath)
		if *update {
			writeArgoCDConfigMap(t, want)
		}
	}
}

// The upstream layout's health_test.yaml, run the way Argo CD's
// resource_customizations test does: each input's status and message.
func TestArgoCDHealthTestYAML(t *testing.T) {
	dir := filepath.Dir(healthLuaPath)
	var cases struct {
		Tests []struct {
			HealthStatus struct {
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"healthStatus"`
			InputPath string `json:"inputPath"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "health_test.yaml"))), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases.Tests) == 0 {
		t.Fatal("health_test.yaml has no tests")
	}
	script := readFile(t, healthLuaPath)
	for _, c := range cases.Tests {
		obj := &unstructured.Unstructured{}
		data, err := yaml.YAMLToJSON([]byte(readFile(t, filepath.Join(dir, c.InputPath))))
		if err != nil {
			t.Fatalf("%s: %v", c.InputPath, err)
		}
		if err := obj.UnmarshalJSON(data); err != nil {
			t.Fatalf("%s: %v", c.InputPath, err)
		}
		for _, openLibs := range []bool{true, false} {
			health, message, err := argoHealth(obj, script, openLibs)
			if err != nil {
				t.Errorf("%s (open libs %v): %v", c.InputPath, openLibs, err)
				continue
			}
			if health != c.HealthStatus.Status || message != c.HealthStatus.Message {
				t.Errorf("%s (open libs %v): got %s %q, want %s %q", c.InputPath, openLibs, health,
					message, c.HealthStatus.Status, c.HealthStatus.Message)
			}
		}
	}
}

// The upstream testdata objects are the operator's fixtures in YAML, so the
// check proposed upstream is tested on what the operator writes.
func TestArgoCDTestdataAreTheOperatorFixtures(t *testing.T) {
	dir := filepath.Join(filepath.Dir(healthLuaPath), "testdata")
	for state, obj := range loadObjects(t, fixturesDir) {
		path := filepath.Join(dir, state+".yaml")
		want, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s is not %s/%s.json in YAML; regenerate with `go test -run TestArgoCDTestdata -update`",
				path, fixturesDir, state)
		}
	}
}

func writeArgoCDConfigMap(t *testing.T, script string) {
	t.Helper()
	text := readFile(t, argocdCMPath)
	marker := "  " + argocdCMKey + ": |\n"
	at := strings.Index(text, marker)
	if at < 0 {
		t.Fatalf("%s has no %q", argocdCMPath, marker)
	}
	var indented strings.Builder
	for _, line := range strings.SplitAfter(script, "\n") {
		if strings.TrimSpace(line) != "" {
			indented.WriteString("    ")
		}
		indented.WriteString(line)
	}
	if err := os.WriteFile(argocdCMPath, []byte(text[:at+len(marker)]+indented.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ---- LoadTestSchedules ------------------------------------------------------------

// scheduleExpected is what kstatus must conclude from a LoadTestSchedule, by
// fixture (testdata/schedule/<state>.json, written by the unit tests'
// SchedulePlanGolden from plan_schedule): a schedule whose newest run failed
// (or whose spec is invalid) is Failed (Stalled=True), never Current; one
// whose status is of an older generation is InProgress; one whose newest
// run passed, or with no run finished yet (Ready=True, NoRunFinished: kstatus
// reads Ready=Unknown as InProgress), or with a run going, is Current.
var scheduleExpected = map[string]status.Status{
	"unseen":          status.InProgressStatus,
	"no-run-yet":      status.CurrentStatus,
	"running":         status.CurrentStatus,
	"passed":          status.CurrentStatus,
	"stale-passed":    status.InProgressStatus,
	"last-run-failed": status.FailedStatus,
	"invalid-spec":    status.FailedStatus,
}

func TestScheduleFixturesReadRightInKstatus(t *testing.T) {
	objects := loadObjects(t, "testdata/schedule")
	if len(objects) == 0 {
		t.Fatal("testdata/schedule is empty (the unit tests write it with KUBELOAD_UPDATE_GOLDEN=1)")
	}
	for state, obj := range objects {
		want, known := scheduleExpected[state]
		if !known {
			t.Errorf("%s: no expected kstatus for this schedule state (known: %v)", state, keys(scheduleExpected))
			continue
		}
		if result, err := status.Compute(obj); err != nil {
			t.Errorf("%s: kstatus (sigs.k8s.io/cli-utils): %v", state, err)
		} else if result.Status != want {
			t.Errorf("%s: kstatus (sigs.k8s.io/cli-utils) reads %s (%s), want %s", state, result.Status, result.Message, want)
		}
		if result, err := fluxstatus.Compute(obj); err != nil {
			t.Errorf("%s: kstatus (fluxcd/cli-utils): %v", state, err)
		} else if result.Status.String() != want.String() {
			t.Errorf("%s: kstatus (fluxcd/cli-utils) reads %s (%s), want %s", state, result.Status, result.Message, want)
		}
	}
	for state := range scheduleExpected {
		if objects[state] == nil {
			t.Errorf("testdata/schedule/%s.json is missing", state)
		}
	}
}

const scheduleHealthLuaPath = repoRoot + "/deploy/argocd/resource_customizations/kubeload.dev/LoadTestSchedule/health.lua"

// What the Argo CD health check of a LoadTestSchedule says of each fixture:
// the same as kstatus (Failed is Degraded, InProgress Progressing, Current
// Healthy).
var scheduleArgoFor = map[status.Status]string{
	status.InProgressStatus: "Progressing",
	status.CurrentStatus:    "Healthy",
	status.FailedStatus:     "Degraded",
}

func TestScheduleFixturesReadRightInArgoCD(t *testing.T) {
	script := readFile(t, scheduleHealthLuaPath)
	for state, obj := range loadObjects(t, "testdata/schedule") {
		want := scheduleArgoFor[scheduleExpected[state]]
		for _, openLibs := range []bool{true, false} {
			health, message, err := argoHealth(obj, script, openLibs)
			if err != nil {
				t.Errorf("%s (open libs %v): %v", state, openLibs, err)
				continue
			}
			if health != want {
				t.Errorf("%s (open libs %v): Argo CD health %s (%s), want %s", state, openLibs, health, message, want)
			}
			if message == "" {
				t.Errorf("%s: the Argo CD health check gives no message", state)
			}
		}
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, argocdCMPath)), &cm); err != nil {
		t.Fatal(err)
	}
	if got := cm.Data["resource.customizations.health.kubeload.dev_LoadTestSchedule"]; got != script {
		t.Errorf("%s: the LoadTestSchedule key differs from %s", argocdCMPath, scheduleHealthLuaPath)
	}
}
