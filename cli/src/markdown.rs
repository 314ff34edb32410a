//! Markdown to safe HTML for the web UI, the one renderer of `sna view` and `sna serve`:
//! pulldown-cmark parses (CommonMark with tables, strikethrough and task lists), a pass over its
//! events adapts what the pages need, and ammonia keeps only the tags and attributes written here.
//!
//! What the pages get:
//! - text that looks like HTML stays text (`<b>` shows as `<b>`); a line break inside a paragraph
//!   is a line break, as in a chat;
//! - links only to `http`/`https`, opening in a new tab; any other link is its text followed by
//!   the address in parentheses, and a bare `https://…` in text becomes a link;
//! - images from the network are never loaded: `![alt](https://…)` is a link; an embed of the
//!   session, `![alt](embed://ID)`, becomes `<span class="embed-ref" data-embed="ID">alt</span>`,
//!   which the page replaces with the image or attachment it knows (`timeline.js`);
//! - a fenced code block is `<pre class="code" data-lang="LANG"><code>…</code></pre>` without
//!   its last line break (the page colours it by `data-lang`);
//! - a table is wrapped in `<div class="table-wrap">` (it scrolls sideways on its own), its
//!   columns aligned with `style="text-align: …"`;
//! - a task list item starts with `<span class="task" aria-label="to do">☐</span>` or
//!   `<span class="task done" aria-label="done">☑</span>`.

use std::collections::HashSet;
use std::sync::LazyLock;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeStream};

/// Text escaped for HTML, in element content and in quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The HTML of Markdown text (see the module's documentation for what it holds).
pub fn to_html(text: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut pass = Pass::default();
    for event in TextMergeStream::new(Parser::new_ext(text, options)) {
        pass.take(event);
    }
    let mut html = String::with_capacity(text.len() * 5 / 4 + 16);
    pulldown_cmark::html::push_html(&mut html, pass.out.into_iter());
    // No line break after the last element: the text of a page's element ends with the text's.
    SANITIZER.clean(&html).to_string().trim_end().to_string()
}

/// The tags and attributes the pass above writes, and nothing else.
static SANITIZER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut builder = ammonia::Builder::empty();
    builder
        .add_tags([
            "a", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre", "span", "strong",
            "table", "tbody", "td", "th", "thead", "tr", "ul",
        ])
        .add_tag_attributes("a", ["href", "title"])
        .add_tag_attributes("ol", ["start"])
        .add_tag_attributes("pre", ["data-lang"])
        .add_tag_attributes("span", ["data-embed", "aria-label"])
        .add_tag_attributes("th", ["style"])
        .add_tag_attributes("td", ["style"])
        .add_allowed_classes("pre", ["code"])
        .add_allowed_classes("div", ["table-wrap"])
        .add_allowed_classes("span", ["embed-ref", "task", "done"])
        .filter_style_properties(HashSet::from(["text-align"]))
        .url_schemes(HashSet::from(["http", "https"]))
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .set_tag_attribute_value("a", "target", "_blank");
    builder
});

fn is_web(url: &str) -> bool {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The id of an embed reference `embed://ID` (letters, digits and `._:-`).
fn embed_id(url: &str) -> Option<&str> {
    let id = url.trim().strip_prefix("embed://")?;
    let valid = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    valid.then_some(id)
}

/// The pass over pulldown-cmark's events: what it collects while inside a construct, and the
/// events it hands on.
#[derive(Default)]
struct Pass<'a> {
    out: Vec<Event<'a>>,
    /// Inside a code block: its language and text so far.
    code: Option<(String, String)>,
    /// Inside an image: its address and alt text so far, and how deep (an alt may hold images).
    image: Option<(String, String)>,
    image_depth: usize,
    /// Inside an HTML block: its text so far (shown as text).
    html_block: Option<String>,
    /// The links open: `None` for a link kept, `Some(what follows its text)` for one dropped.
    links: Vec<Option<String>>,
}

impl<'a> Pass<'a> {
    fn take(&mut self, event: Event<'a>) {
        if self.image_depth > 0 {
            return self.in_image(event);
        }
        if let Some((lang, body)) = &mut self.code {
            match event {
                Event::Text(text) => body.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    let code = body.strip_suffix('\n').unwrap_or(body);
                    let lang = if lang.is_empty() { String::new() } else { format!(" data-lang=\"{}\"", escape(lang)) };
                    let html = format!("<pre class=\"code\"{lang}><code>{}</code></pre>\n", escape(code));
                    self.code = None;
                    self.out.push(Event::Html(html.into()));
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or("").to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Event::Start(Tag::Image { dest_url, .. }) => {
                self.image = Some((dest_url.to_string(), String::new()));
                self.image_depth = 1;
            }
            Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
                if is_web(&dest_url) {
                    self.links.push(None);
                    self.out.push(Event::Start(Tag::Link { link_type, dest_url, title, id }));
                } else {
                    // The text of an autolink is its address already.
                    let after = if matches!(link_type, LinkType::Autolink | LinkType::Email) { String::new() } else { format!(" ({dest_url})") };
                    self.links.push(Some(after));
                }
            }
            Event::End(TagEnd::Link) => match self.links.pop() {
                Some(Some(after)) if !after.is_empty() => self.out.push(Event::Text(after.into())),
                Some(Some(_)) => {}
                _ => self.out.push(Event::End(TagEnd::Link)),
            },
            Event::Start(Tag::HtmlBlock) => self.html_block = Some(String::new()),
            Event::End(TagEnd::HtmlBlock) => {
                let text = self.html_block.take().unwrap_or_default();
                self.out.push(Event::Start(Tag::Paragraph));
                for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.out.push(Event::HardBreak);
                    }
                    self.out.push(Event::Text(line.to_string().into()));
                }
                self.out.push(Event::End(TagEnd::Paragraph));
            }
            Event::Html(text) | Event::InlineHtml(text) => match &mut self.html_block {
                Some(block) => block.push_str(&text),
                None => self.out.push(Event::Text(text)),
            },
            Event::SoftBreak => self.out.push(Event::HardBreak),
            Event::TaskListMarker(done) => {
                let mark = if done { "<span class=\"task done\" aria-label=\"done\">☑</span> " } else { "<span class=\"task\" aria-label=\"to do\">☐</span> " };
                self.out.push(Event::Html(mark.into()));
            }
            Event::Start(Tag::Table(alignments)) => {
                self.out.push(Event::Html("<div class=\"table-wrap\">".into()));
                self.out.push(Event::Start(Tag::Table(alignments)));
            }
            Event::End(TagEnd::Table) => {
                self.out.push(Event::End(TagEnd::Table));
                self.out.push(Event::Html("</div>\n".into()));
            }
            Event::Text(text) if self.links.is_empty() => self.linkify(text),
            event => self.out.push(event),
        }
    }

    /// Inside an image: its alt text is collected; at its end, what stands for it.
    fn in_image(&mut self, event: Event<'a>) {
        match event {
            Event::Start(Tag::Image { .. }) => self.image_depth += 1,
            Event::End(TagEnd::Image) => {
                self.image_depth -= 1;
                if self.image_depth > 0 {
                    return;
                }
                let (url, alt) = self.image.take().unwrap_or_default();
                let html = if let Some(id) = embed_id(&url) {
                    format!("<span class=\"embed-ref\" data-embed=\"{}\">{}</span>", escape(id), escape(&alt))
                } else if is_web(&url) {
                    // Not loaded (no network resources): a link to it.
                    let text = if alt.is_empty() { &url } else { &alt };
                    format!("<a href=\"{}\">{}</a>", escape(&url), escape(text))
                } else {
                    escape(&format!("![{alt}]({url})"))
                };
                self.out.push(Event::Html(html.into()));
            }
            Event::Text(text) | Event::Code(text) | Event::Html(text) | Event::InlineHtml(text) => {
                if let Some((_, alt)) = &mut self.image {
                    alt.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some((_, alt)) = &mut self.image {
                    alt.push(' ');
                }
            }
            _ => {}
        }
    }

    /// Text with each bare `http(s)://` address in it made a link.
    fn linkify(&mut self, text: CowStr<'a>) {
        let mut finder = linkify::LinkFinder::new();
        finder.kinds(&[linkify::LinkKind::Url]);
        let mut last = 0;
        for link in finder.links(&text).filter(|link| is_web(link.as_str())) {
            if link.start() > last {
                self.out.push(Event::Text(text[last..link.start()].to_string().into()));
            }
            let url: CowStr<'a> = link.as_str().to_string().into();
            self.out.push(Event::Start(Tag::Link { link_type: LinkType::Autolink, dest_url: url.clone(), title: "".into(), id: "".into() }));
            self.out.push(Event::Text(url));
            self.out.push(Event::End(TagEnd::Link));
            last = link.end();
        }
        match last {
            0 => self.out.push(Event::Text(text)),
            _ if last < text.len() => self.out.push(Event::Text(text[last..].to_string().into())),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::to_html;

    /// The HTML with the line breaks between elements left out.
    fn html(text: &str) -> String {
        to_html(text).replace(">\n<", "><").replace("<br>\n", "<br>")
    }

    #[test]
    fn blocks_and_spans() {
        assert_eq!(
            html("## Files\n\nThe project holds **two files**, listed by `ls`:\n\n- a\n- b\n\n> quoted *em* ~~gone~~\n\n---"),
            "<h2>Files</h2><p>The project holds <strong>two files</strong>, listed by <code>ls</code>:</p><ul><li>a</li><li>b</li></ul>\
             <blockquote><p>quoted <em>em</em> <del>gone</del></p></blockquote><hr>"
        );
        assert_eq!(html("5. five\n6. six"), "<ol start=\"5\"><li>five</li><li>six</li></ol>");
        // A line break inside a paragraph stays one.
        assert_eq!(html("one\ntwo"), "<p>one<br>two</p>");
    }

    #[test]
    fn code_blocks_carry_their_language_and_lose_the_last_line_break() {
        assert_eq!(html("```sh title\nls -1\n```"), "<pre class=\"code\" data-lang=\"sh\"><code>ls -1</code></pre>");
        assert_eq!(html("~~~\na < b\n\n~~~"), "<pre class=\"code\"><code>a &lt; b\n</code></pre>");
        // Still open (a block streaming in): the text so far.
        assert_eq!(html("```rust\nfn main"), "<pre class=\"code\" data-lang=\"rust\"><code>fn main</code></pre>");
    }

    #[test]
    fn html_in_the_text_is_text() {
        assert_eq!(html("A red square <b>not bold</b>."), "<p>A red square &lt;b&gt;not bold&lt;/b&gt;.</p>");
        assert_eq!(html("<div onclick=\"x()\">\nhi\n</div>"), "<p>&lt;div onclick=\"x()\"&gt;<br>hi<br>&lt;/div&gt;</p>");
        assert_eq!(html("<script>alert(1)</script>"), "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>");
    }

    #[test]
    fn links_go_only_to_the_web_in_a_new_tab() {
        let a = |url: &str, text: &str| format!("<a href=\"{url}\" target=\"_blank\" rel=\"noopener noreferrer\">{text}</a>");
        assert_eq!(html("[t](https://x.org/a)"), format!("<p>{}</p>", a("https://x.org/a", "t")));
        assert_eq!(html("<http://x.org>"), format!("<p>{}</p>", a("http://x.org", "http://x.org")));
        assert_eq!(html("see https://x.org/a_(b)_c). now"), format!("<p>see {}). now</p>", a("https://x.org/a_(b)_c", "https://x.org/a_(b)_c")));
        assert_eq!(html("[rel](src/main.rs) [js](javascript:alert(1)) <ftp://a.b> <me@a.org>"), "<p>rel (src/main.rs) js (javascript:alert(1)) ftp://a.b me@a.org</p>");
        // Nor inside code.
        assert_eq!(html("`https://x.org`"), "<p><code>https://x.org</code></p>");
    }

    #[test]
    fn images_are_embeds_of_the_session_or_links() {
        assert_eq!(html("What? ![red](embed://red.1)"), "<p>What? <span class=\"embed-ref\" data-embed=\"red.1\">red</span></p>");
        assert_eq!(
            html("![a *b*](https://x.org/i.png) ![](https://x.org/j.png)"),
            "<p><a href=\"https://x.org/i.png\" target=\"_blank\" rel=\"noopener noreferrer\">a b</a> \
             <a href=\"https://x.org/j.png\" target=\"_blank\" rel=\"noopener noreferrer\">https://x.org/j.png</a></p>"
        );
        assert_eq!(html("![x](file.png) ![y](embed://a/b)"), "<p>![x](file.png) ![y](embed://a/b)</p>");
    }

    #[test]
    fn tables_and_task_lists() {
        assert_eq!(
            html("| a | b | c |\n|:-:|--:|---|\n| 1 | **2** |"),
            "<div class=\"table-wrap\"><table><thead><tr><th style=\"text-align:center\">a</th><th style=\"text-align:right\">b</th><th>c</th></tr></thead>\
             <tbody><tr><td style=\"text-align:center\">1</td><td style=\"text-align:right\"><strong>2</strong></td><td></td></tr></tbody></table></div>"
        );
        assert_eq!(
            html("- [ ] todo\n- [x] done"),
            "<ul><li><span class=\"task\" aria-label=\"to do\">☐</span> todo</li><li><span class=\"task done\" aria-label=\"done\">☑</span> done</li></ul>"
        );
    }

    #[test]
    fn empty_and_odd_input() {
        assert_eq!(to_html(""), "");
        assert_eq!(to_html("a\n\n\nb\n\n"), "<p>a</p>\n<p>b</p>");
        // A NUL goes; CR LF is a line end.
        assert_eq!(html("a\0b\r\nc"), "<p>ab<br>c</p>");
    }
}
