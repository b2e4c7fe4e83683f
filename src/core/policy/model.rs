//! The policy's vocabulary: object types, privileges and where each is grantable (docs/design.md §3).

/// A Gravitino securable object type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectType {
    Metalake,
    Catalog,
    Schema,
    Table,
    View,
    Function,
    Topic,
    Fileset,
    Model,
    Tag,
    Policy,
    JobTemplate,
    Role,
    Job,
}

impl ObjectType {
    pub const ALL: [ObjectType; 14] = [
        Self::Metalake,
        Self::Catalog,
        Self::Schema,
        Self::Table,
        Self::View,
        Self::Function,
        Self::Topic,
        Self::Fileset,
        Self::Model,
        Self::Tag,
        Self::Policy,
        Self::JobTemplate,
        Self::Role,
        Self::Job,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Metalake => "METALAKE",
            Self::Catalog => "CATALOG",
            Self::Schema => "SCHEMA",
            Self::Table => "TABLE",
            Self::View => "VIEW",
            Self::Function => "FUNCTION",
            Self::Topic => "TOPIC",
            Self::Fileset => "FILESET",
            Self::Model => "MODEL",
            Self::Tag => "TAG",
            Self::Policy => "POLICY",
            Self::JobTemplate => "JOB_TEMPLATE",
            Self::Role => "ROLE",
            Self::Job => "JOB",
        }
    }

    /// Case-insensitive, as Gravitino's own role JSON uses lower case.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str().eq_ignore_ascii_case(s))
    }

    /// The shape of a full name of this type (docs/design.md §3).
    pub fn name_shape(self) -> NameShape {
        match self {
            Self::Metalake => NameShape::Metalake,
            Self::Catalog => NameShape::Catalog,
            Self::Schema => NameShape::Schema,
            Self::Table | Self::View | Self::Function | Self::Topic | Self::Fileset | Self::Model => {
                NameShape::SchemaObject
            }
            Self::Tag | Self::Policy | Self::JobTemplate | Self::Role | Self::Job => NameShape::MetalakeObject,
        }
    }
}

impl std::fmt::Display for ObjectType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a full name is built for a type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameShape {
    /// The snapshot's `metalake` itself.
    Metalake,
    /// `c`
    Catalog,
    /// `c.s` or nested `c.a:b:c`
    Schema,
    /// `c.s.name` (the name may contain `.`)
    SchemaObject,
    /// `name`, directly under the metalake
    MetalakeObject,
}

/// ALLOW or DENY.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Condition {
    Allow,
    Deny,
}

impl Condition {
    pub fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("allow") {
            Some(Self::Allow)
        } else if s.eq_ignore_ascii_case("deny") {
            Some(Self::Deny)
        } else {
            None
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "ALLOW",
            Self::Deny => "DENY",
        }
    }
}

/// Whether an owner is a user or a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnerType {
    User,
    Group,
}

impl OwnerType {
    pub fn parse(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("user") {
            Some(Self::User)
        } else if s.eq_ignore_ascii_case("group") {
            Some(Self::Group)
        } else {
            None
        }
    }
}

macro_rules! privileges {
    ($($variant:ident = $name:literal on [$($ty:ident),+];)+) => {
        /// A Gravitino privilege. Only some are checked by Iceberg operations; the others are
        /// accepted so that real Gravitino exports load.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Privilege { $($variant),+ }

        impl Privilege {
            pub const ALL: &'static [Privilege] = &[$(Self::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name),+ }
            }

            /// The object types this privilege can be granted on (docs/design.md §3's table).
            pub fn grantable_on(self) -> &'static [ObjectType] {
                match self { $(Self::$variant => &[$(ObjectType::$ty),+]),+ }
            }
        }
    };
}

privileges! {
    CreateCatalog = "CREATE_CATALOG" on [Metalake];
    UseCatalog = "USE_CATALOG" on [Metalake, Catalog];
    CreateSchema = "CREATE_SCHEMA" on [Metalake, Catalog, Schema];
    UseSchema = "USE_SCHEMA" on [Metalake, Catalog, Schema];
    CreateTable = "CREATE_TABLE" on [Metalake, Catalog, Schema];
    ModifyTable = "MODIFY_TABLE" on [Metalake, Catalog, Schema, Table];
    SelectTable = "SELECT_TABLE" on [Metalake, Catalog, Schema, Table];
    CreateView = "CREATE_VIEW" on [Metalake, Catalog, Schema];
    SelectView = "SELECT_VIEW" on [Metalake, Catalog, Schema, View];
    RegisterFunction = "REGISTER_FUNCTION" on [Metalake, Catalog, Schema];
    ExecuteFunction = "EXECUTE_FUNCTION" on [Metalake, Catalog, Schema, Function];
    ModifyFunction = "MODIFY_FUNCTION" on [Metalake, Catalog, Schema, Function];
    ManageGrants = "MANAGE_GRANTS" on [Metalake, Catalog, Schema, Table, View, Topic, Fileset, Model, Function];
    ManageUsers = "MANAGE_USERS" on [Metalake];
    ManageGroups = "MANAGE_GROUPS" on [Metalake];
    CreateRole = "CREATE_ROLE" on [Metalake];
    CreateTag = "CREATE_TAG" on [Metalake];
    ApplyTag = "APPLY_TAG" on [Metalake, Tag];
    CreatePolicy = "CREATE_POLICY" on [Metalake];
    ApplyPolicy = "APPLY_POLICY" on [Metalake, Policy];
    RegisterJobTemplate = "REGISTER_JOB_TEMPLATE" on [Metalake];
    UseJobTemplate = "USE_JOB_TEMPLATE" on [Metalake, JobTemplate];
    RunJob = "RUN_JOB" on [Metalake];
    CreateTopic = "CREATE_TOPIC" on [Metalake, Catalog, Schema];
    CreateFileset = "CREATE_FILESET" on [Metalake, Catalog, Schema];
    RegisterModel = "REGISTER_MODEL" on [Metalake, Catalog, Schema];
    CreateModel = "CREATE_MODEL" on [Metalake, Catalog, Schema];
    ProduceTopic = "PRODUCE_TOPIC" on [Metalake, Catalog, Schema, Topic];
    ConsumeTopic = "CONSUME_TOPIC" on [Metalake, Catalog, Schema, Topic];
    WriteFileset = "WRITE_FILESET" on [Metalake, Catalog, Schema, Fileset];
    ReadFileset = "READ_FILESET" on [Metalake, Catalog, Schema, Fileset];
    LinkModelVersion = "LINK_MODEL_VERSION" on [Metalake, Catalog, Schema, Model];
    UseModel = "USE_MODEL" on [Metalake, Catalog, Schema, Model];
    CreateModelVersion = "CREATE_MODEL_VERSION" on [Metalake, Catalog, Schema, Model];
}

impl Privilege {
    /// Case-insensitive (docs/design.md §3).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|p| p.as_str().eq_ignore_ascii_case(s))
    }

    pub fn is_grantable_on(self, ty: ObjectType) -> bool {
        self.grantable_on().contains(&ty)
    }
}

impl std::fmt::Display for Privilege {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_case_insensitively() {
        assert_eq!(Privilege::parse("select_table"), Some(Privilege::SelectTable));
        assert_eq!(Privilege::parse("Use_Catalog"), Some(Privilege::UseCatalog));
        assert_eq!(Privilege::parse("SELECT"), None);
        assert_eq!(ObjectType::parse("job_template"), Some(ObjectType::JobTemplate));
        assert_eq!(Condition::parse("allow"), Some(Condition::Allow));
        assert_eq!(OwnerType::parse("GROUP"), Some(OwnerType::Group));
    }

    #[test]
    fn every_privilege_is_grantable_on_the_metalake() {
        for p in Privilege::ALL {
            assert!(p.is_grantable_on(ObjectType::Metalake), "{p}");
            assert_eq!(Privilege::parse(p.as_str()), Some(*p));
        }
    }

    #[test]
    fn table_privileges_stop_at_their_objects() {
        assert!(Privilege::SelectTable.is_grantable_on(ObjectType::Table));
        assert!(!Privilege::SelectTable.is_grantable_on(ObjectType::View));
        assert!(!Privilege::CreateTable.is_grantable_on(ObjectType::Table));
        assert!(!Privilege::UseSchema.is_grantable_on(ObjectType::Table));
        assert!(Privilege::SelectView.is_grantable_on(ObjectType::View));
        assert!(Privilege::ManageGrants.is_grantable_on(ObjectType::Fileset));
        assert!(!Privilege::ManageGrants.is_grantable_on(ObjectType::Tag));
    }
}
