//! The mock model server, exercised over real TCP with a raw HTTP client.

// Test code: the helpers that parse responses panic on anything unexpected, which is the
// failure a test wants.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod anthropic;
mod openai_chat;
mod responses;
mod server;
mod support;
