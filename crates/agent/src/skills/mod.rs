//! The tools that give the skills the catalogue finds ([`toolhost_catalog::skills`]) to the
//! model: [`ListSkills`] and [`ReadSkill`]. The hub that installs skills is
//! `toolhost-skillhub`.

mod list_skills;
mod read_skill;

pub use list_skills::ListSkills;
pub use read_skill::ReadSkill;
