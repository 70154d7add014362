package rewrite

import "sync"

// cacheKey identifies an analysis: the text and the options it was read
// with. Analyses do not depend on the fork map, so one entry serves every
// map version; applying a resolver is a splice over the cached sites.
type cacheKey struct {
	sql  string
	opts Options
}

// cache is a bounded map of analyses. When full it drops the older of two
// generations, which keeps hot statements without per-hit bookkeeping.
type cache struct {
	mu       sync.RWMutex
	cur, old map[cacheKey]*Analysis
	capacity int
}

// newCache returns a cache of about capacity analyses.
func newCache(capacity int) *cache {
	return &cache{cur: map[cacheKey]*Analysis{}, old: map[cacheKey]*Analysis{}, capacity: capacity}
}

// get is the analysis cached for k, nil when there is none.
func (c *cache) get(k cacheKey) *Analysis {
	c.mu.RLock()
	a := c.cur[k]
	if a == nil {
		a = c.old[k]
	}
	c.mu.RUnlock()
	return a
}

// put caches a for k; a full current generation becomes the old one,
// dropping the one before.
func (c *cache) put(k cacheKey, a *Analysis) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.cur) >= c.capacity/2 {
		c.old, c.cur = c.cur, make(map[cacheKey]*Analysis, c.capacity/2)
	}
	c.cur[k] = a
}
