//! The one way HTML and SVG are written: an element builder whose attribute values
//! and text are escaped as they are added, so escaping is total by construction. A
//! [`Markup`] is only ever made here: from a builder, from escaped text, or from a
//! `&'static str` written in this crate (a stylesheet, a fixed fragment); no string
//! from the results can become markup without passing through [`escape`].
//!
//! ```text
//! el("rect").attr("x", D1(x)).attr("fill", color).empty()   // <rect x="12.5" fill="#fff"/>
//! el("text").attr("y", 24).text(&title)                      // <text y="24">…escaped…</text>
//! el("g").attr("class", "s0").child(line).child(label)      // <g class="s0">…</g>
//! ```

use std::fmt::{self, Display, Write as _};

/// Escapes text for XML/HTML content and attribute values (control characters other
/// than tab and line feed become U+FFFD, which XML cannot carry).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A well-formed, escaped fragment of HTML or SVG.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Markup(String);

impl Markup {
    pub fn new() -> Markup {
        Markup::default()
    }

    /// A fragment written in this crate's source (never data).
    pub fn trusted(fixed: &'static str) -> Markup {
        Markup(fixed.to_string())
    }

    /// Text, escaped.
    pub fn text(t: &str) -> Markup {
        Markup(escape(t))
    }

    /// Appends a fragment.
    pub fn push(&mut self, m: Markup) -> &mut Markup {
        self.0.push_str(&m.0);
        self
    }

    /// Appends text, escaped.
    pub fn push_text(&mut self, t: &str) -> &mut Markup {
        self.0.push_str(&escape(t));
        self
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Display for Markup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromIterator<Markup> for Markup {
    fn from_iter<I: IntoIterator<Item = Markup>>(iter: I) -> Markup {
        let mut out = Markup::new();
        for m in iter {
            out.push(m);
        }
        out
    }
}

/// An element being built: its name and the attributes written so far.
#[must_use = "an element is written only when closed (`empty`, `void`, `text`, `child`)"]
pub struct El {
    name: &'static str,
    head: String,
}

/// Starts an element.
pub fn el(name: &'static str) -> El {
    El {
        name,
        head: format!("<{name}"),
    }
}

impl El {
    /// `name="value"`, the value escaped.
    pub fn attr(mut self, name: &'static str, value: impl Display) -> El {
        let _ = write!(self.head, " {name}=\"{}\"", escape(&value.to_string()));
        self
    }

    /// The attribute only when there is a value.
    pub fn attr_opt(self, name: &'static str, value: Option<impl Display>) -> El {
        match value {
            Some(v) => self.attr(name, v),
            None => self,
        }
    }

    /// A boolean attribute (`checked`, `hidden`).
    pub fn flag(mut self, name: &'static str) -> El {
        let _ = write!(self.head, " {name}");
        self
    }

    /// `<name …/>` (SVG and XML).
    pub fn empty(self) -> Markup {
        Markup(self.head + "/>")
    }

    /// `<name …>` without a closing tag (HTML void elements: `input`, `meta`).
    pub fn void(self) -> Markup {
        Markup(self.head + ">")
    }

    /// `<name …>text</name>`, the text escaped.
    pub fn text(self, t: &str) -> Markup {
        self.child(Markup::text(t))
    }

    /// `<name …>inner</name>`.
    pub fn child(self, inner: Markup) -> Markup {
        Markup(format!("{}>{}</{}>", self.head, inner.0, self.name))
    }

    /// `<name …>` the children in order `</name>`.
    pub fn children(self, inner: impl IntoIterator<Item = Markup>) -> Markup {
        self.child(inner.into_iter().collect())
    }
}

/// A coordinate as the charts write it: one decimal (`12.5`).
#[derive(Debug, Clone, Copy)]
pub struct D1(pub f64);

impl Display for D1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1}", self.0)
    }
}

/// A size as the charts write it: no decimals (`720`).
#[derive(Debug, Clone, Copy)]
pub struct D0(pub f64);

impl Display for D0 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.0}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(escape("a\u{1}b\tc"), "a\u{fffd}b\tc");
    }

    #[test]
    fn attributes_and_text_are_escaped_by_construction() {
        let hostile = r#""><script>alert(1)</script>"#;
        let m = el("g")
            .attr("class", hostile)
            .child(el("text").attr("x", D1(1.25)).text(hostile));
        assert_eq!(
            m.as_str(),
            "<g class=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\"><text x=\"1.2\">&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;</text></g>"
        );
        assert_eq!(
            el("input").attr("id", "a").flag("checked").void().as_str(),
            "<input id=\"a\" checked>"
        );
        assert_eq!(
            el("rect").attr("width", D0(719.6)).empty().as_str(),
            "<rect width=\"720\"/>"
        );
    }
}
