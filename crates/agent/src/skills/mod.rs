//! What runs on the skills the catalogue finds ([`toolhost_catalog::skills`]): the tools that
//! give them to the model ([`ListSkills`], [`ReadSkill`]) and the skill hub ([`hub`]), which
//! downloads and installs them.

pub mod hub;
mod list_skills;
mod read_skill;

pub use list_skills::ListSkills;
pub use read_skill::ReadSkill;
