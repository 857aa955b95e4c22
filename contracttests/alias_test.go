package contracttests

import "github.com/dealer-edge/dealer-edge/aggregator"

type aggregatorSettings = aggregator.Settings
