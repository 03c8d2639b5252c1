//! Token cost from a model's catalog rates (pi-ai `calculateCost`): rates per million
//! tokens, the highest `tiers` entry whose `inputTokensAbove` the request's input exceeds,
//! and 1-hour cache writes at twice the input rate.

use crate::json::Value;

use crate::message::Usage;

pub fn calculate_cost(model: &Value, usage: &mut Usage) {
    let input_tokens = usage.input + usage.cache_read + usage.cache_write;
    let base = model.get("cost");
    let mut rates = base;
    let mut matched = -1.0;
    for tier in base
        .and_then(|c| c.get("tiers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let above = tier
            .get("inputTokensAbove")
            .and_then(Value::as_f64)
            .unwrap_or(f64::INFINITY);
        if input_tokens > above && above > matched {
            rates = Some(tier);
            matched = above;
        }
    }
    let rate = |k: &str| {
        rates
            .and_then(|r| r.get(k))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    let long_write = usage.cache_write_1h.unwrap_or(0.0);
    let short_write = usage.cache_write - long_write;
    usage.cost.input = rate("input") / 1_000_000.0 * usage.input;
    usage.cost.output = rate("output") / 1_000_000.0 * usage.output;
    usage.cost.cache_read = rate("cacheRead") / 1_000_000.0 * usage.cache_read;
    usage.cost.cache_write =
        (rate("cacheWrite") * short_write + rate("input") * 2.0 * long_write) / 1_000_000.0;
    usage.cost.total =
        usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
    usage.cost.total_from_provider = Some(false);
}
