package balance

import (
	"encoding/json"
	"fmt"
)

func fmtp(p *float64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func show(r Reading) string {
	b, _ := json.Marshal(r)
	return string(b)
}
