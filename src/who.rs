//! Who is at the keyboard: the person a command acts for (`--as NAME`),
//! with the operating-system account and the machine beside it, as the
//! preparer of a run and its approver are recorded (README, "3. Approve").
//! The one rule of when two records name the same person ([`Person::same_as`])
//! lives here. A leaf: it reads the environment and the host name only.
//!
//! The OS account is what the environment says (`USER`, `LOGNAME`,
//! `USERNAME`), as git and ssh read it: a control between honest
//! colleagues, which anyone can set otherwise (README, "What four eyes
//! protect against").

/// A person as recorded: the name they gave (or their OS account), the OS
/// account and the machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub os_user: String,
    pub host: String,
}

impl Person {
    /// The person running this process: `name` (`--as`), else the OS
    /// account.
    pub fn current(name: Option<&str>) -> Person {
        let os_user = os_user();
        let name = name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| os_user.clone());
        Person {
            name,
            os_user,
            host: host(),
        }
    }

    /// Whether `self` and `other` are one person for four eyes: the same
    /// name (case, accents' case and spacing aside), or the same OS account
    /// on the same machine — a preparer who types another name from their
    /// own account is still the preparer.
    pub fn same_as(&self, other: &Person) -> bool {
        let key = |s: &str| {
            s.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        };
        key(&self.name) == key(&other.name)
            || (self.os_user == other.os_user && self.host == other.host)
    }

    /// `Ama (ama@box-a)`, or `ama@box-a` when the name is the account.
    pub fn shown(&self) -> String {
        if self.name == self.os_user {
            format!("{}@{}", self.os_user, self.host)
        } else {
            format!("{} ({}@{})", self.name, self.os_user, self.host)
        }
    }
}

/// The OS account this process runs under, as the environment names it;
/// `uid N` when it does not.
pub fn os_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty())
        .unwrap_or_else(uid)
}

#[cfg(unix)]
fn uid() -> String {
    // SAFETY: getuid has no preconditions and cannot fail.
    format!("uid {}", unsafe { libc::getuid() })
}

#[cfg(not(unix))]
fn uid() -> String {
    "?".to_string()
}

/// This machine's name (`?` when the system does not say).
pub fn host() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| std::fs::read_to_string(p).ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "?".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, user: &str, host: &str) -> Person {
        Person {
            name: name.into(),
            os_user: user.into(),
            host: host.into(),
        }
    }

    #[test]
    fn the_same_name_or_the_same_account_is_the_same_person() {
        let ama = p("Ama  Mensah", "ama", "box-a");
        assert!(ama.same_as(&p("ama mensah", "kofi", "box-b")));
        assert!(ama.same_as(&p("Kofi", "ama", "box-a")), "own account");
        assert!(!ama.same_as(&p("Kofi", "kofi", "box-a")));
        assert!(!ama.same_as(&p("Kofi", "ama", "box-b")), "another machine");
        assert_eq!(ama.shown(), "Ama  Mensah (ama@box-a)");
        assert_eq!(p("ama", "ama", "h").shown(), "ama@h");
    }

    #[test]
    fn a_blank_name_is_the_os_account() {
        let me = Person::current(Some("  "));
        assert_eq!(me.name, me.os_user);
        assert_eq!(Person::current(Some(" Kofi ")).name, "Kofi");
    }
}
