/**
 * Small stopword lists. Chinese function characters split CJK runs (so "客厅的灯" yields 客厅 and 灯, not 厅的 and
 * 的灯); Chinese stop bigrams and English stopwords are dropped.
 *
 * @module
 */

/** Characters that split a CJK run: particles, and 是/把/哪, which almost never sit inside a content word. */
export const ZH_SPLIT_CHARS = new Set([..."的了吗呢吧啊呀哦嘛着是把哪"]);

/** Single characters not worth a unigram when they stand alone. */
export const ZH_STOP_CHARS = new Set([..."我你他她它们这那是在有和与及或也都就还很请帮把被给让个么吗呢吧啊呀哦嘛的了着过地得"]);

/** Bigrams that carry no content (question words, pronouns, fillers). */
export const ZH_STOP_BIGRAMS = new Set([
  "什么", "怎么", "怎样", "如何", "为什", "哪个", "哪些", "哪里", "哪儿", "多少", "是否", "是不", "不是", "请问",
  "可以", "能不", "一下", "我们", "你们", "他们", "她们", "它们", "这个", "那个", "这些", "那些", "一个", "没有",
  "是什", "是哪", "是谁", "是多", "就是", "还是", "但是", "因为", "所以", "如果", "已经", "现在", "时候",
]);

/** English stopwords (already lower-case; matched before stemming). */
export const EN_STOPWORDS = new Set([
  "a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "to", "of", "in", "on", "at", "for",
  "and", "or", "but", "it", "its", "this", "that", "these", "those", "my", "me", "i", "you", "your", "we", "our",
  "he", "she", "his", "her", "they", "them", "their", "please", "can", "could", "would", "should", "will", "shall",
  "do", "does", "did", "with", "from", "by", "as", "so", "if", "then", "than", "there", "here", "what", "which",
  "who", "whom", "when", "where", "why", "how", "all", "any", "some", "just", "also", "about", "into", "up", "down",
  "out", "off", "over", "again", "very", "too", "not", "no", "yes", "ok", "hey", "hi", "s", "t", "d", "ll", "m",
  "re", "ve",
]);
