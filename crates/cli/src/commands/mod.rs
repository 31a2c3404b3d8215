//! One module per subcommand.

pub mod call;
pub mod tools;
