package turn

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	pionturn "github.com/pion/turn/v4"
)

// TestUpstreamCanary_ChannelLookup: pion/turn's Server still exports only
// AllocationCount and Close, so nothing outside pion can look up an
// allocation's channel bindings (pionfix_channelmirror.go copies them from
// its events).
func TestUpstreamCanary_ChannelLookup(t *testing.T) {
	typ := reflect.TypeFor[*pionturn.Server]()
	var methods []string
	for i := range typ.NumMethod() {
		methods = append(methods, typ.Method(i).Name)
	}
	if want := []string{"AllocationCount", "Close"}; !slices.Equal(methods, want) {
		upstreamGone(t, "pionfix_channelmirror.go", "*turn.Server exports "+
			"methods "+fmt.Sprint(methods)+", not just "+fmt.Sprint(want))
	}
}
