/* Sphinx 9.0's Chinese language_data.js sets `window.Stemmer = ChineseStemmer` without defining it (a
   ReferenceError that stops the search). Its Chinese index stems Latin words as English does
   (sphinx/search/zh.py), so the English stemmer, defined by the same file, is the one to use. */
var ChineseStemmer = function () {
  return new EnglishStemmer();
};
