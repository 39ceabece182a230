package httplimit

import (
	"fmt"
	"net/http"

	"github.com/bucketctl/bucketctl/bucket"
)

// Routes maps ServeMux patterns ("GET /me", "/items/{id}") to the tokens a request takes.
// Cost fits Config.Cost or Tier.Cost; Pattern fits Tier.Scope (a bucket per route).
type Routes struct {
	mux   *http.ServeMux
	costs map[string]float64
	def   float64
}

// NewRoutes returns a route table; requests that match no pattern cost def.
func NewRoutes(def float64, costs map[string]float64) (rt *Routes, err error) {
	if !validCost(def) {
		return nil, fmt.Errorf("httplimit: default cost %v: want a finite number >= 0", def)
	}
	rt = &Routes{mux: http.NewServeMux(), costs: make(map[string]float64, len(costs)), def: def}
	defer func() { // ServeMux panics on a bad pattern
		if p := recover(); p != nil {
			rt, err = nil, fmt.Errorf("httplimit: route table: %v", p)
		}
	}()
	for pattern, c := range costs {
		if !validCost(c) {
			return nil, fmt.Errorf("httplimit: route %q: cost %v: want a finite number >= 0", pattern, c)
		}
		rt.mux.Handle(pattern, http.NotFoundHandler())
		rt.costs[pattern] = c
	}
	return rt, nil
}

func validCost(c float64) bool { return bucket.Spec{}.ValidateCost(c) == nil }

// Cost is the cost of r: the cost of the pattern it matches, else the default.
func (rt *Routes) Cost(r *http.Request) float64 {
	if c, ok := rt.costs[rt.match(r)]; ok {
		return c
	}
	return rt.def
}

// Pattern is the table's pattern r matches, or "*" when it matches none.
func (rt *Routes) Pattern(r *http.Request) string {
	if p := rt.match(r); p != "" {
		return p
	}
	return "*"
}

func (rt *Routes) match(r *http.Request) string {
	_, p := rt.mux.Handler(r)
	return p
}
