//! One module per subcommand.

pub mod call;
pub mod serve;
pub mod tools;
