/**
 * Small stopword lists. Chinese function characters split CJK runs (so "客厅的灯" yields 客厅 and 灯, not 厅的 and
 * 的灯); Chinese stop bigrams and English stopwords are dropped.
 *
 * @module
 */

/** Characters that split a CJK run: particles, and 是/把/哪, which almost never sit inside a content word. */
export const ZH_SPLIT_CHARS = new Set([..."的了吗呢吧啊呀哦嘛着是把哪"]);

/** Single characters not worth a unigram when they stand alone. */
export const ZH_STOP_CHARS = new Set([
  ..."我你他她它们这那是在有和与及或也都就还很请帮把被给让个么吗呢吧啊呀哦嘛的了着过地得",
]);

/** Bigrams that carry no content (question words, pronouns, fillers). */
export const ZH_STOP_BIGRAMS = new Set([
  "什么",
  "怎么",
  "怎样",
  "如何",
  "为什",
  "哪个",
  "哪些",
  "哪里",
  "哪儿",
  "多少",
  "是否",
  "是不",
  "不是",
  "请问",
  "可以",
  "能不",
  "一下",
  "我们",
  "你们",
  "他们",
  "她们",
  "它们",
  "这个",
  "那个",
  "这些",
  "那些",
  "一个",
  "没有",
  "是什",
  "是哪",
  "是谁",
  "是多",
  "就是",
  "还是",
  "但是",
  "因为",
  "所以",
  "如果",
  "已经",
  "现在",
  "时候",
]);

/** Question words and fillers removed with both characters, so they leave no half-bigrams behind (职什, 么位). */
export const ZH_QUESTION_BIGRAMS = new Set([
  "什么",
  "怎么",
  "怎样",
  "为什",
  "哪个",
  "哪些",
  "哪里",
  "哪儿",
  "请问",
  "是否",
]);

/**
 * Words that name a day or week relative to when they are said (今天, 大前天, 上周三, 下个月): "今天" in June and
 * "今天" in August are different days, so they are not matched as words — they are dropped with all their characters
 * (as question words are: no half-bigrams such as 奶前 or 天买 around them). A question's day words are read as a
 * period by `memory/recall/named_period.ts` instead, and a turn's as a time by `time_words.ts`.
 */
export const ZH_DEICTIC_WORDS: ReadonlySet<string> = new Set([
  ..."大前天|前天|昨天|今天|明天|后天|大后天|昨晚|今晚|明晚|上个月|下个月|这个月|本月|上上个月".split("|"),
  ...["上上", "上", "下", "这", "本"].flatMap((when) =>
    ["周", "星期", "礼拜"].flatMap((unit) => [..."一二三四五六日天", ""].map((day) => `${when}${unit}${day}`))
  ),
]);

/** The longest of {@link ZH_DEICTIC_WORDS}, in characters. */
export const ZH_DEICTIC_MAX = Math.max(...[...ZH_DEICTIC_WORDS].map((word) => word.length));

/**
 * One-character verbs of household talk. Their bigrams cross into the next word (去超市 → 去超, 妈妈去 → 妈去), so
 * "妈妈去了哪里" and "我今天去超市" would share no term: these characters are also indexed alone.
 */
export const ZH_VERB_CHARS: ReadonlySet<string> = new Set([..."去来回买卖吃喝看找拿送接借还修换交扔洗煮做穿住坐碰见"]);

/** English stopwords (already lower-case; matched before stemming). */
export const EN_STOPWORDS = new Set([
  "a",
  "an",
  "the",
  "is",
  "are",
  "was",
  "were",
  "be",
  "been",
  "being",
  "am",
  "to",
  "of",
  "in",
  "on",
  "at",
  "for",
  "and",
  "or",
  "but",
  "it",
  "its",
  "this",
  "that",
  "these",
  "those",
  "my",
  "me",
  "i",
  "you",
  "your",
  "we",
  "our",
  "he",
  "she",
  "his",
  "her",
  "they",
  "them",
  "their",
  "please",
  "can",
  "could",
  "would",
  "should",
  "will",
  "shall",
  "do",
  "does",
  "did",
  "doing",
  "has",
  "have",
  "had",
  "having",
  "us",
  "him",
  "during",
  "with",
  "from",
  "by",
  "as",
  "so",
  "if",
  "then",
  "than",
  "there",
  "here",
  "what",
  "which",
  "who",
  "whom",
  "when",
  "where",
  "why",
  "how",
  "all",
  "any",
  "some",
  "just",
  "also",
  "about",
  "into",
  "up",
  "down",
  "out",
  "off",
  "over",
  "again",
  "very",
  "too",
  "not",
  "no",
  "yes",
  "ok",
  "hey",
  "hi",
  "s",
  "t",
  "d",
  "ll",
  "m",
  "re",
  "ve",
]);
