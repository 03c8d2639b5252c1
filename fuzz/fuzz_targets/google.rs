//! Arbitrary SSE bytes through the google decoder, as the built-in stream feeds it
//! (see pi_fuzz::provider): the first byte picks how the body is split.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_fuzz::provider::{fuzz, Api};

fuzz_target!(|data: &[u8]| pi_fuzz::on_big_stack(|| fuzz(Api::Google, data)));
