//! The Super Smack 1.3 language: a recursive-descent parser over the
//! lexer's tokens (`lex`), producing a [`SmackFile`] (`syntax`).
//!
//! The grammar, as Super Smack's flex/bison files define it:
//! ```text
//! file      := section* main
//! section   := ("client" | "table" | "dictionary" | "query") STRING "{" member* "}"
//! member    := KEYWORD STRING ";"
//! main      := "main" "{" (call | assign)* "}"
//! call      := IDENT "." IDENT "(" [expr ("," expr)*] ")" ";"
//! assign    := "$" IDENT "=" expr ";"
//! expr      := simple ("." simple)*
//! simple    := NUMBER | STRING | "$" NUMBER | "$" IDENT
//!            | IDENT "::" IDENT ["::" IDENT]
//! ```
//! Comments run from `//` or `#` to the end of the line. Strings are in
//! double quotes and may span lines; inside them `\\` is a backslash, `\"` a
//! quote and a backslash before a newline keeps the newline. Super Smack
//! drops any other escaped character together with its backslash; so does
//! this lexer.

use std::path::Path;

use super::lex::{Lexer, Tok};
pub use super::syntax::{Block, BlockKind, Expr, MainLine, Member, Pos, SmackError, SmackFile};

struct Parser<'a> {
    toks: Vec<(Tok, Pos)>,
    i: usize,
    file: &'a Path,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.i + k).min(self.toks.len() - 1)].0
    }

    fn pos(&self) -> Pos {
        self.toks[self.i].1
    }

    fn next(&mut self) -> (Tok, Pos) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn err_expected(&self, expected: &str) -> SmackError {
        SmackError {
            file: self.file.to_path_buf(),
            pos: self.pos(),
            message: format!("expected {expected}, found {}", self.peek().describe()),
        }
    }

    fn punct(&mut self, p: &'static str, expected: &str) -> Result<Pos, SmackError> {
        if *self.peek() == Tok::Punct(p) {
            Ok(self.next().1)
        } else {
            Err(self.err_expected(expected))
        }
    }

    fn string(&mut self, expected: &str) -> Result<String, SmackError> {
        match self.peek() {
            Tok::Str(_) => match self.next().0 {
                Tok::Str(s) => Ok(s),
                _ => unreachable!(),
            },
            _ => Err(self.err_expected(expected)),
        }
    }

    fn ident(&mut self, expected: &str) -> Result<(String, Pos), SmackError> {
        match self.peek() {
            Tok::Ident(_) => match self.next() {
                (Tok::Ident(s), p) => Ok((s, p)),
                _ => unreachable!(),
            },
            _ => Err(self.err_expected(expected)),
        }
    }

    fn file(mut self) -> Result<SmackFile, SmackError> {
        let mut blocks = Vec::new();
        loop {
            let pos = self.pos();
            let kind =
                match self.peek() {
                    Tok::Ident(s) => match s.as_str() {
                        "client" => BlockKind::Client,
                        "table" => BlockKind::Table,
                        "dictionary" => BlockKind::Dictionary,
                        "query" => BlockKind::Query,
                        "main" => break,
                        _ => {
                            return Err(self
                                .err_expected("a block: client, table, dictionary, query or main"))
                        }
                    },
                    Tok::Eof => {
                        return Err(self
                            .err_expected("a main { … } block (every .smack file ends with one)"))
                    }
                    _ => {
                        return Err(
                            self.err_expected("a block: client, table, dictionary, query or main")
                        )
                    }
                };
            self.next();
            let name = self.string(&format!("the {} name in double quotes", kind.name()))?;
            self.punct("{", &format!("'{{' to open {} \"{name}\"", kind.name()))?;
            let mut members = Vec::new();
            loop {
                if *self.peek() == Tok::Punct("}") {
                    self.next();
                    break;
                }
                let keys = kind.keys();
                let expected = format!("a {} keyword ({}) or '}}'", kind.name(), keys.join(", "));
                let (key, kpos) = match self.peek() {
                    Tok::Ident(k) if keys.contains(&k.as_str()) => {
                        let k = k.clone();
                        (k, self.next().1)
                    }
                    _ => return Err(self.err_expected(&expected)),
                };
                let value = self.string(&format!("the value of {key} in double quotes"))?;
                self.punct(";", &format!("';' after the value of {key}"))?;
                members.push(Member {
                    key,
                    value,
                    pos: kpos,
                });
            }
            blocks.push(Block {
                kind,
                name,
                pos,
                members,
            });
        }
        let main_pos = self.next().1;
        self.punct("{", "'{' after main")?;
        let mut main = Vec::new();
        loop {
            match self.peek() {
                Tok::Punct("}") => {
                    self.next();
                    break;
                }
                Tok::Punct("$") => {
                    let pos = self.next().1;
                    let (var, _) = self.ident("a variable name after '$'")?;
                    self.punct("=", &format!("'=' after ${var}"))?;
                    let value = self.expr()?;
                    self.punct(";", "';' at the end of the assignment")?;
                    main.push(MainLine::Assign { var, value, pos });
                }
                Tok::Ident(_) => {
                    let (client, pos) = self.ident("a client name")?;
                    self.punct(".", &format!("'.' and a method after client name '{client}' (e.g. {client}.connect();)"))?;
                    // `query` is a keyword in the lexer but a method here.
                    let (method, _) = self.ident("a method name (init, set_num_rounds, create_threads, connect, unload_query_barrel, collect_threads, disconnect, sleep, print, query)")?;
                    self.punct("(", &format!("'(' after {client}.{method}"))?;
                    let mut args = Vec::new();
                    if *self.peek() != Tok::Punct(")") {
                        loop {
                            args.push(self.expr()?);
                            if *self.peek() == Tok::Punct(",") {
                                self.next();
                                continue;
                            }
                            break;
                        }
                    }
                    self.punct(")", "',' or ')' in the argument list")?;
                    self.punct(";", &format!("';' after {client}.{method}(…)"))?;
                    main.push(MainLine::Call {
                        client,
                        method,
                        args,
                        pos,
                    });
                }
                _ => {
                    return Err(self.err_expected(
                        "a call like client.method(args); , an assignment $var = value; or '}' closing main",
                    ))
                }
            }
        }
        if *self.peek() != Tok::Eof {
            return Err(self.err_expected("the end of the file after the main block"));
        }
        Ok(SmackFile {
            path: self.file.to_path_buf(),
            blocks,
            main,
            main_pos,
        })
    }

    fn expr(&mut self) -> Result<Expr, SmackError> {
        let mut parts = vec![self.simple()?];
        while *self.peek() == Tok::Punct(".") {
            self.next();
            parts.push(self.simple()?);
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap()
        } else {
            Expr::Concat(parts)
        })
    }

    fn simple(&mut self) -> Result<Expr, SmackError> {
        const WHAT: &str = "a value: a number, a \"string\", $N (a command-line argument), $variable or client::param";
        match self.peek().clone() {
            Tok::Number(n) => {
                self.next();
                Ok(Expr::Number(n))
            }
            Tok::Str(s) => {
                self.next();
                Ok(Expr::Str(s))
            }
            Tok::Punct("$") => {
                self.next();
                match self.peek().clone() {
                    Tok::Number(n) => {
                        let pos = self.pos();
                        self.next();
                        let n = n.parse().map_err(|_| SmackError {
                            file: self.file.to_path_buf(),
                            pos,
                            message: format!("argument number ${n} is too large"),
                        })?;
                        Ok(Expr::Arg(n))
                    }
                    Tok::Ident(v) => {
                        self.next();
                        Ok(Expr::Var(v))
                    }
                    _ => Err(self.err_expected("an argument number or a variable name after '$'")),
                }
            }
            Tok::Ident(c) if *self.peek_at(1) == Tok::Punct("::") => {
                self.next();
                let mut path = vec![c];
                while *self.peek() == Tok::Punct("::") {
                    self.next();
                    path.push(self.ident("a name after '::'")?.0);
                }
                if path.len() > 3 {
                    return Err(self.err_expected("client::param or client::query_type::param"));
                }
                Ok(Expr::ClientParam(path))
            }
            _ => Err(self.err_expected(WHAT)),
        }
    }
}

/// Parses the text of a .smack file (`path` is only for messages).
pub fn parse(path: &Path, src: &str) -> Result<SmackFile, SmackError> {
    let toks = Lexer::new(path, src).tokens()?;
    Parser {
        toks,
        i: 0,
        file: path,
    }
    .file()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(src: &str) -> Result<SmackFile, SmackError> {
        parse(Path::new("t.smack"), src)
    }

    fn err(src: &str) -> String {
        p(src).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_block_and_member() {
        let f = p(r#"
            client "c" { user "u"; pass "p"; host "h"; db "d"; port "3306"; socket "/s"; query_barrel "2 q"; }
            table "t" { client "c"; create "create table t (a int)"; min_rows "10"; data_file "t.dat"; gen_data_file "gen-data -n 10 -f %d"; }
            dictionary "w" { type "rand"; source_type "list"; source "a,b"; delim ","; file_size_equiv "100"; }
            query "q" { query "select '$w'"; type "sel"; has_result_set "y"; parsed "y"; }
            main { c.init(); }
        "#)
        .unwrap();
        assert_eq!(f.blocks.len(), 4);
        let c = f.block(BlockKind::Client, "c").unwrap();
        assert_eq!(c.get("port").unwrap().value, "3306");
        assert_eq!(c.get("query_barrel").unwrap().value, "2 q");
        let t = f.block(BlockKind::Table, "t").unwrap();
        assert_eq!(
            t.get("gen_data_file").unwrap().value,
            "gen-data -n 10 -f %d"
        );
        let d = f.block(BlockKind::Dictionary, "w").unwrap();
        assert_eq!(d.get("file_size_equiv").unwrap().value, "100");
        let q = f.block(BlockKind::Query, "q").unwrap();
        assert_eq!(q.get("query").unwrap().value, "select '$w'");
        assert_eq!(q.pos, Pos { line: 5, col: 13 });
        assert_eq!(
            f.main,
            vec![MainLine::Call {
                client: "c".into(),
                method: "init".into(),
                args: vec![],
                pos: Pos { line: 6, col: 20 }
            }]
        );
    }

    #[test]
    fn comments_of_both_kinds_are_skipped() {
        let f = p("# hash\n// slashes\nclient \"c\" { user \"u\"; # trailing\n } // after\nmain { c.init(); // x\n }\n")
            .unwrap();
        assert_eq!(f.blocks[0].members.len(), 1);
        assert_eq!(f.main.len(), 1);
    }

    #[test]
    fn strings_span_lines_and_keep_super_smack_escapes() {
        let f = p("query \"q\" { query \"select 1\nfrom t where a = \\\"x\\\" and b = '\\\\' \\\nand c\\q\"; }\nmain { }")
            .unwrap();
        assert_eq!(
            f.blocks[0].get("query").unwrap().value,
            "select 1\nfrom t where a = \"x\" and b = '\\' \nand c"
        );
    }

    #[test]
    fn main_lines_take_arguments_variables_and_expressions() {
        let f = p("main { $n = $1 . \"0\"; c.set_num_rounds($n); c.create_threads(4); c.print(c::select::q_per_s); c.sleep(1, 500); c.query(\"x\"); }")
            .unwrap();
        assert_eq!(
            f.main[0],
            MainLine::Assign {
                var: "n".into(),
                value: Expr::Concat(vec![Expr::Arg(1), Expr::Str("0".into())]),
                pos: Pos { line: 1, col: 8 }
            }
        );
        let args = |i: usize| match &f.main[i] {
            MainLine::Call { args, .. } => args.clone(),
            _ => panic!(),
        };
        assert_eq!(args(1), vec![Expr::Var("n".into())]);
        assert_eq!(args(2), vec![Expr::Number("4".into())]);
        assert_eq!(
            args(3),
            vec![Expr::ClientParam(vec![
                "c".into(),
                "select".into(),
                "q_per_s".into()
            ])]
        );
        assert_eq!(args(4).len(), 2);
        match &f.main[5] {
            MainLine::Call { method, .. } => assert_eq!(method, "query"),
            _ => panic!(),
        }
    }

    #[test]
    fn later_definitions_win() {
        let f =
            p("client \"c\" { user \"a\"; user \"b\"; }\nclient \"c\" { user \"z\"; }\nmain {}")
                .unwrap();
        assert_eq!(
            f.block(BlockKind::Client, "c")
                .unwrap()
                .get("user")
                .unwrap()
                .value,
            "z"
        );
        assert_eq!(f.blocks[0].get("user").unwrap().value, "b");
    }

    #[test]
    fn error_messages_name_file_line_column_and_what_was_expected() {
        assert_eq!(
            err("client \"c\" {\n  user \"u\"\n}\nmain {}"),
            "t.smack:3:1: expected ';' after the value of user, found '}'"
        );
        assert_eq!(
            err("client \"c\" { colour \"red\"; }"),
            "t.smack:1:14: expected a client keyword (user, pass, host, db, port, socket, query_barrel) or '}', found 'colour'"
        );
        assert_eq!(
            err("client c { }"),
            "t.smack:1:8: expected the client name in double quotes, found 'c'"
        );
        assert_eq!(
            err("query \"q\" { query \"select"),
            "t.smack:1:19: unterminated string: no closing '\"' before the end of the file"
        );
        assert_eq!(
            err("client \"c\" { user \"u\"; }"),
            "t.smack:1:25: expected a main { … } block (every .smack file ends with one), found the end of the file"
        );
        assert_eq!(
            err("bogus \"x\" {}"),
            "t.smack:1:1: expected a block: client, table, dictionary, query or main, found 'bogus'"
        );
        assert_eq!(
            err("main { c.init() }"),
            "t.smack:1:17: expected ';' after c.init(…), found '}'"
        );
        assert_eq!(
            err("main { c init(); }"),
            "t.smack:1:10: expected '.' and a method after client name 'c' (e.g. c.connect();), found 'init'"
        );
        assert_eq!(
            err("main { c.f(1 2); }"),
            "t.smack:1:14: expected ',' or ')' in the argument list, found number 2"
        );
        assert_eq!(
            err("main { c.f(;); }"),
            "t.smack:1:12: expected a value: a number, a \"string\", $N (a command-line argument), $variable or client::param, found ';'"
        );
        assert_eq!(
            err("main { } extra"),
            "t.smack:1:10: expected the end of the file after the main block, found 'extra'"
        );
        assert_eq!(
            err("main { c.f(); }\n@"),
            "t.smack:2:1: unexpected character '@': expected a block (client, table, dictionary, query, main), a keyword, a \"string\", or one of { } ( ) ; . , $ = ::"
        );
        assert_eq!(
            err("main { $ = 1; }"),
            "t.smack:1:10: expected a variable name after '$', found '='"
        );
    }
}
